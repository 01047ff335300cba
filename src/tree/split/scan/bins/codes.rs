//! The non-empty codes [`super::scan_codes`] walks, in increasing order: those of a
//! bitmap of the codes a gathered candidate's rows occupy, or of a node's kept bins.

/// The codes of a bitmap, bit `c` of word `w` standing for code `base + 64 w + c`: the
/// codes a gathered candidate's rows occupy, in increasing order.
pub(crate) struct Bitmap<'a> {
    words: &'a [u64],
    base: usize,
    /// The word being read and its bits not yet visited.
    word: usize,
    bits: u64,
}

impl<'a> Bitmap<'a> {
    pub(crate) fn new(words: &'a [u64], base: usize) -> Self {
        let bits = words.first().copied().unwrap_or(0);
        Bitmap {
            words,
            base,
            word: 0,
            bits,
        }
    }
}

impl Iterator for Bitmap<'_> {
    /// The code, twice: the code and where its bins are.
    type Item = (usize, usize);

    #[inline(always)]
    fn next(&mut self) -> Option<(usize, usize)> {
        while self.bits == 0 {
            self.word += 1;
            self.bits = *self.words.get(self.word)?;
        }
        let code = self.base + self.word * 64 + self.bits.trailing_zeros() as usize;
        self.bits &= self.bits - 1;
        Some((code, code))
    }
}

/// The codes `lo..` of bins (`stride` values each, the row count last) with a row, each
/// with its bin: a node's kept bins, in increasing order.
pub(crate) fn dense(
    bins: &[f64],
    lo: usize,
    stride: usize,
) -> impl Iterator<Item = (usize, &[f64])> {
    let bins = bins.chunks_exact(stride).enumerate();
    bins.filter_map(move |(b, stats)| (stats[stride - 1] as usize != 0).then_some((lo + b, stats)))
}
