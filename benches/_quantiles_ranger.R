# ranger's quantile regression forest (quantreg = TRUE) for benches/bench_quantiles.py and
# bench_intervals.py: one Rscript run over several splits, each a directory that
# _peerlib.RangerData wrote (xtr, xte float32 column-major; ytr float64; sizes read from
# the files). For each: fit, then predict(type = "quantiles") of the timed quantiles timed
# inside R (min of `repeats`), the written quantiles predicted by the same forest to
# <dir>/quantiles (float64, column-major n_test x q), and one JSON line on stdout.
# Args: trees threads min_node_size repeats timed(comma list) written(comma list) dir [dir ...]
#
# What ranger computes (0.14.1, R/ranger.R and R/predict.R): at fit, for every tree and
# terminal node, ONE training target drawn at random among all the training rows that reach
# the node (in-bag or not); at predict, R's quantile(type = 7) of the num.trees values a row
# reaches, in an R apply() over the rows.
suppressMessages(library(ranger))
a <- commandArgs(trailingOnly = TRUE)
trees <- as.integer(a[1]); threads <- as.integer(a[2]); min_node <- as.integer(a[3])
reps <- max(1L, as.integer(a[4])); qs <- as.numeric(strsplit(a[5], ",")[[1]])
written <- as.numeric(strsplit(a[6], ",")[[1]])
dirs <- a[-(1:6)]

rd <- function(dir, name, size) {
  path <- file.path(dir, name)
  readBin(path, "numeric", n = file.size(path) / size, size = size)
}
secs <- function(f) { t0 <- Sys.time(); r <- f(); list(s = as.numeric(Sys.time() - t0, units = "secs"), r = r) }

for (k in seq_along(dirs)) {
  dir <- dirs[k]
  y_tr <- rd(dir, "ytr", 8); n_tr <- length(y_tr)
  x_tr <- matrix(rd(dir, "xtr", 4), nrow = n_tr)
  p <- ncol(x_tr)
  x_te <- matrix(rd(dir, "xte", 4), ncol = p)
  colnames(x_tr) <- colnames(x_te) <- paste0("x", seq_len(p))
  fit <- secs(function() {
    ranger(x = x_tr, y = y_tr, num.trees = trees, mtry = p, min.node.size = min_node,
           num.threads = threads, seed = k, quantreg = TRUE)
  })
  runs <- lapply(seq_len(reps), function(i) {
    secs(function() predict(fit$r, data = x_te, type = "quantiles", quantiles = qs,
                            num.threads = threads)$predictions)
  })
  pred <- predict(fit$r, data = x_te, type = "quantiles", quantiles = written,
                  num.threads = threads)$predictions
  writeBin(as.vector(pred), file.path(dir, "quantiles"), size = 8)
  cat(sprintf('{"fit_s": %.6g, "predict_s": %.6g}\n', fit$s, min(vapply(runs, function(r) r$s, 0))))
}
