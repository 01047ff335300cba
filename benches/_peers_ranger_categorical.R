# ranger side of benches/bench_categorical.py: one table, one model, timings inside R, one
# JSON line on stdout.
# Args: dir task(classification|regression) model(rf|et) n_trees threads mtry repeats
# dir holds train.csv and test.csv (target column "y"; the categorical columns as text, no
# missing values: the bench gives a missing category its own level) and cats.txt (the names
# of the categorical columns, one per line). They are read and turned into factors before any
# timing; a test level that training lacks is appended by ranger's predict after the trained
# levels (so it goes right of every "order" split).
suppressMessages(library(ranger))
a <- commandArgs(trailingOnly = TRUE)
dir <- a[1]; task <- a[2]; model <- a[3]; trees <- as.integer(a[4])
threads <- as.integer(a[5]); mtry <- as.integer(a[6]); reps <- max(1L, as.integer(a[7]))

cats <- readLines(file.path(dir, "cats.txt"))
cats <- cats[nzchar(cats)]
read <- function(name) {
  utils::read.csv(file.path(dir, name), check.names = FALSE, stringsAsFactors = FALSE,
                  colClasses = stats::setNames(rep("character", length(cats)), cats))
}
tr <- read("train.csv"); te <- read("test.csv")
for (c in cats) {
  lv <- sort(unique(tr[[c]]))
  tr[[c]] <- factor(tr[[c]], levels = lv)
  te[[c]] <- factor(te[[c]], levels = union(lv, sort(unique(te[[c]]))))
}
cls <- task == "classification"
y_tr <- tr$y; y_te <- te$y
tr$y <- NULL; te$y <- NULL
if (cls) y_tr <- factor(y_tr)
extra <- model == "et"
rule <- if (extra) "extratrees" else if (cls) "gini" else "variance"

# Fully grown trees (min.node.size = 1) as the other forests; bootstrap for RF, the whole
# learning set for Extra-Trees; factors ordered once by the response at the root
# ("order": mean response, the proportion of the second class, or for several classes the
# first principal component of the class proportions, as ranger documents).
fit <- function() {
  ranger(x = tr, y = y_tr, num.trees = trees, mtry = mtry, num.threads = threads, seed = 0,
         probability = cls, min.node.size = 1, splitrule = rule, replace = !extra,
         sample.fraction = 1, respect.unordered.factors = "order", oob.error = FALSE)
}
secs <- function(f) {
  t0 <- Sys.time(); r <- f()
  list(s = as.numeric(Sys.time() - t0, units = "secs"), r = r)
}
runs <- lapply(seq_len(reps), function(i) secs(fit))
fit_s <- min(vapply(runs, function(r) r$s, 0))
model_fit <- runs[[reps]]$r
pr <- secs(function() predict(model_fit, data = te, num.threads = threads)$predictions)
score <- if (cls) {
  mean(colnames(pr$r)[max.col(pr$r, ties.method = "first")] == as.character(y_te))
} else {
  1 - sum((y_te - pr$r)^2) / sum((y_te - mean(y_te))^2)
}
cat(sprintf('{"fit_s": %.6g, "predict_s": %.6g, "score": %.6g}\n', fit_s, pr$s, score))
