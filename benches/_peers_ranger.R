# ranger side of benches/peers.py and bench_real_tables.py: one workload, timings inside R,
# one JSON line on stdout.
# Args: dir n_train n_test p task model(rf|et|hist) n_trees threads repeats ops(comma list)
#       [stat(median|min) [mtry]]   -- optional: how repeats are reduced (default median) and
#       K per node (missing or 0: the default below).
# The data are raw column-major binaries (X float32, y float64) read before any timing.
suppressMessages(library(ranger))
a <- commandArgs(trailingOnly = TRUE)
dir <- a[1]; n_tr <- as.integer(a[2]); n_te <- as.integer(a[3]); p <- as.integer(a[4])
task <- a[5]; model <- a[6]; trees <- as.integer(a[7]); threads <- as.integer(a[8])
reps <- max(1L, as.integer(a[9])); ops <- strsplit(a[10], ",")[[1]]
stat <- if (length(a) >= 11 && a[11] == "min") min else median
mtry_arg <- if (length(a) >= 12) as.integer(a[12]) else 0L

rd <- function(name, n, size) readBin(file.path(dir, name), "numeric", n = n, size = size)
x_tr <- matrix(rd("xtr", n_tr * p, 4), nrow = n_tr)
x_te <- matrix(rd("xte", n_te * p, 4), nrow = n_te)
colnames(x_tr) <- colnames(x_te) <- paste0("x", seq_len(p))
cls <- task == "classification"
y_tr <- rd("ytr", n_tr, 8); y_te <- rd("yte", n_te, 8)
if (cls) y_tr <- factor(y_tr)
extra <- model == "et"
# Same model as scikit-learn's defaults: K = floor(sqrt(p)) (classification) or p
# (regression), fully grown trees (min.node.size = 1), bootstrap for RF and the whole
# learning set for Extra-Trees (one random threshold per candidate feature).
mtry <- if (cls) max(1L, as.integer(floor(sqrt(p)))) else p
if (mtry_arg > 0L) mtry <- mtry_arg  # the caller's K (e.g. max_features=0.5)
rule <- if (extra) "extratrees" else if (cls) "gini" else "variance"

fit <- function(oob = FALSE, imp = "none", x = x_tr, y = y_tr, ntree = trees) {
  ranger(x = x, y = y, num.trees = ntree, mtry = mtry, num.threads = threads,
         seed = 0, probability = cls, min.node.size = 1, splitrule = rule,
         replace = !extra, sample.fraction = 1, oob.error = oob, importance = imp)
}
secs <- function(f) { t0 <- Sys.time(); r <- f(); list(s = as.numeric(Sys.time() - t0, units = "secs"), r = r) }
med <- function(f, n = reps) {  # stat (median or min) of the seconds of n calls, last result
  runs <- lapply(seq_len(n), function(i) secs(f))
  list(s = stat(vapply(runs, function(r) r$s, 0)), r = runs[[n]]$r)
}
kib <- function(field) {
  line <- grep(paste0("^", field, ":"), readLines("/proc/self/status"), value = TRUE)
  as.numeric(strsplit(trimws(sub("^[^:]*:", "", line)), " +")[[1]][1])
}
acc <- function(prob, y) mean(as.numeric(colnames(prob)[max.col(prob, ties.method = "first")]) == y)
r2 <- function(pred, y) 1 - sum((y - pred)^2) / sum((y - mean(y))^2)

# Peak RSS of the first fit: reset the high-water mark (Linux >= 4.0) once the data are
# loaded and a warm-up fit on 200 rows has paged in the code and started the threads.
w <- seq_len(min(200L, n_tr))
invisible(fit(x = x_tr[w, , drop = FALSE], y = y_tr[w], ntree = 2L))
invisible(gc())
exact <- tryCatch({ cat("5", file = "/proc/self/clear_refs"); TRUE }, error = function(e) FALSE)
before <- kib("VmRSS")
first <- secs(function() fit())
peak <- (kib("VmHWM") - if (exact) before else 0) / 1024
rest <- if (reps > 1) vapply(seq_len(reps - 1), function(i) secs(function() fit())$s, 0) else c()
fit_s <- stat(c(first$s, rest))
model_fit <- first$r
# As for the Python libraries: one untimed prediction, then the stat of at least 5.
predict_te <- function() predict(model_fit, data = x_te, num.threads = threads)$predictions
invisible(predict_te())
pr <- med(predict_te, max(reps, 5L))
sc <- if (cls) acc(pr$r, y_te) else r2(pr$r, y_te)
f <- tempfile(); saveRDS(model_fit, f, compress = FALSE); bytes <- file.size(f); unlink(f)

oob_s <- NA; oob_score <- NA; perm_s <- NA
if ("oob" %in% ops && !extra) {  # Extra-Trees on the whole learning set have no OOB rows
  o <- med(function() fit(oob = TRUE))
  oob_s <- o$s - fit_s
  oob_score <- if (cls) {
    ok <- stats::complete.cases(o$r$predictions)
    acc(o$r$predictions[ok, , drop = FALSE], as.numeric(as.character(y_tr[ok])))
  } else o$r$r.squared
}
if ("permutation" %in% ops && !extra) perm_s <- med(function() fit(imp = "permutation"))$s - fit_s

num <- function(x) if (is.null(x) || is.na(x)) "null" else sprintf("%.6g", x)
cat(sprintf(paste0('{"fit_s": %s, "predict_s": %s, "score": %s, "model_bytes": %s, ',
                   '"peak_fit_mib": %s, "oob_s": %s, "oob_score": %s, "perm_oob_s": %s}\n'),
            num(fit_s), num(pr$s), num(sc), sprintf("%.0f", bytes), num(peak), num(oob_s), num(oob_score),
            num(perm_s)))
