//! NumPy arrays in, core views out, without copies.
//!
//! X is borrowed in place when it is float32 or float64 and C- or Fortran-contiguous, or a
//! scipy CSC matrix (or array) of those dtypes with int32 indices; anything else is refused
//! with `TypeError` (the Python layer converts once before calling). A sparse matrix's
//! index is checked (`CscIndex::new`) when its view is made, with the GIL held.
//! Targets arrive as uint32 class codes or float64 values and are turned into the core's
//! [`Targets`] in one place, [`Labels::targets`].

use numpy::{PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::exceptions::{PyIndexError, PyTypeError};
use pyo3::prelude::*;

use std::cell::OnceCell;

use crate::data::{Layout, Matrix, RowIndex, Targets};
use crate::error::{ForestError, Result};
use crate::forest::class_codes;

fn binding_error(msg: impl Into<String>) -> ForestError {
    ForestError::Binding(msg.into())
}

/// A borrowed 2-D input matrix of either float type.
pub enum XArray<'py> {
    /// float32 input.
    F32(PyReadonlyArray2<'py, f32>),
    /// float64 input.
    F64(PyReadonlyArray2<'py, f64>),
    /// A float32 CSC matrix.
    SparseF32(SparseArrays<'py, f32>),
    /// A float64 CSC matrix.
    SparseF64(SparseArrays<'py, f64>),
}

/// The arrays of a scipy CSC matrix, borrowed.
pub struct SparseArrays<'py, T: numpy::Element> {
    data: PyReadonlyArray1<'py, T>,
    indices: PyReadonlyArray1<'py, i32>,
    indptr: PyReadonlyArray1<'py, i32>,
    n_rows: usize,
    n_cols: usize,
    /// Its entries by row, made on the first view (every prediction reads them).
    by_row: OnceCell<RowIndex>,
}

impl<'py, T: numpy::Element + crate::data::Feature> SparseArrays<'py, T> {
    fn extract(x: &Bound<'py, PyAny>, data: PyReadonlyArray1<'py, T>) -> PyResult<Self> {
        let index = |name: &str| -> PyResult<PyReadonlyArray1<'py, i32>> {
            x.getattr(name)?.extract().map_err(|_| {
                binding_error(format!("the {name} of a sparse X must be int32")).into()
            })
        };
        let (n_rows, n_cols) = x.getattr("shape")?.extract::<(usize, usize)>()?;
        Ok(SparseArrays {
            data,
            indices: index("indices")?,
            indptr: index("indptr")?,
            n_rows,
            n_cols,
            by_row: OnceCell::new(),
        })
    }

    /// The checked view of the matrix, with its entries by row.
    pub fn matrix(&self) -> Result<Matrix<'_, T>> {
        let x = Matrix::sparse_columns(
            vector(&self.data, "the data of a sparse X")?,
            vector(&self.indptr, "the indptr of a sparse X")?,
            vector(&self.indices, "the indices of a sparse X")?,
            self.n_rows,
            self.n_cols,
        )?;
        Ok(match x.csc_index() {
            Some(csc) => {
                let by_row = self.by_row.get_or_init(|| RowIndex::new(&csc, self.n_rows));
                x.with_row_index(by_row)
            }
            None => x,
        })
    }
}

impl<'py> XArray<'py> {
    pub fn extract(x: &Bound<'py, PyAny>) -> PyResult<Self> {
        if let Ok(format) = x.getattr("format") {
            if format.extract::<String>().ok().as_deref() != Some("csc") {
                return Err(binding_error("a sparse X must be in CSC format").into());
            }
            let data = x.getattr("data")?;
            if let Ok(a) = data.extract::<PyReadonlyArray1<'py, f32>>() {
                return Ok(XArray::SparseF32(SparseArrays::extract(x, a)?));
            }
            if let Ok(a) = data.extract::<PyReadonlyArray1<'py, f64>>() {
                return Ok(XArray::SparseF64(SparseArrays::extract(x, a)?));
            }
            return Err(binding_error("a sparse X must be of dtype float32 or float64").into());
        }
        if let Ok(a) = x.extract::<PyReadonlyArray2<'py, f32>>() {
            return Ok(XArray::F32(a));
        }
        if let Ok(a) = x.extract::<PyReadonlyArray2<'py, f64>>() {
            return Ok(XArray::F64(a));
        }
        Err(binding_error("X must be a 2-D numpy array of dtype float32 or float64").into())
    }
}

/// Views a read-only array as a [`Matrix`] in its own memory order.
pub fn matrix<'a, T: numpy::Element + crate::data::Feature>(
    a: &'a PyReadonlyArray2<'_, T>,
) -> Result<Matrix<'a, T>> {
    let (n, p) = (a.shape()[0], a.shape()[1]);
    let layout = if a.is_c_contiguous() {
        Layout::RowMajor
    } else if a.is_fortran_contiguous() {
        Layout::ColumnMajor
    } else {
        return Err(binding_error("X must be C- or Fortran-contiguous"));
    };
    let data = a
        .as_slice()
        .map_err(|_| binding_error("X must be C- or Fortran-contiguous"))?;
    Matrix::new(data, n, p, layout)
}

/// Runs `$body` with `$m` bound to the `Matrix` of `$x` (an `XArray`), for either dtype.
macro_rules! with_matrix {
    ($x:expr, |$m:ident| $body:expr) => {
        match &$x {
            $crate::python::arrays::XArray::F32(a) => {
                let $m = $crate::python::arrays::matrix(a)?;
                $body
            }
            $crate::python::arrays::XArray::F64(a) => {
                let $m = $crate::python::arrays::matrix(a)?;
                $body
            }
            $crate::python::arrays::XArray::SparseF32(s) => {
                let $m = s.matrix()?;
                $body
            }
            $crate::python::arrays::XArray::SparseF64(s) => {
                let $m = s.matrix()?;
                $body
            }
        }
    };
}
pub(crate) use with_matrix;

/// Targets as passed: uint32 class codes, borrowed in place, or float64 values
/// (regression targets, or class codes as floats); a 2-D array (rows × outputs) for the
/// fit of a multi-output forest.
pub enum YArray<'py> {
    /// uint32 class codes.
    Codes(PyReadonlyArray1<'py, u32>),
    /// float64 values.
    Values(PyReadonlyArray1<'py, f64>),
    /// uint32 class codes, one column per output.
    CodeRows(PyReadonlyArray2<'py, u32>),
    /// float64 values, one column per output.
    ValueRows(PyReadonlyArray2<'py, f64>),
}

impl<'py> YArray<'py> {
    pub fn extract(y: &Bound<'py, PyAny>) -> PyResult<Self> {
        if let Ok(a) = y.extract::<PyReadonlyArray1<'py, u32>>() {
            return Ok(YArray::Codes(a));
        }
        if let Ok(a) = y.extract::<PyReadonlyArray1<'py, f64>>() {
            return Ok(YArray::Values(a));
        }
        if let Ok(a) = y.extract::<PyReadonlyArray2<'py, u32>>() {
            return Ok(YArray::CodeRows(a));
        }
        if let Ok(a) = y.extract::<PyReadonlyArray2<'py, f64>>() {
            return Ok(YArray::ValueRows(a));
        }
        Err(PyTypeError::new_err(
            "argument 'y': must be a 1-D (or, to fit, 2-D) numpy array of dtype uint32 \
             (class codes) or float64",
        ))
    }

    /// The borrowed values, which may cross to the thread that runs the work; one column
    /// only (a 2-D y is refused).
    pub fn labels(&self) -> Result<Labels<'_>> {
        Ok(match self {
            YArray::Codes(a) => Labels::Codes(vector(a, "y")?),
            YArray::Values(a) => Labels::Values(vector(a, "y")?),
            YArray::CodeRows(_) | YArray::ValueRows(_) => {
                return Err(binding_error("y must be 1-D here (one output)"))
            }
        })
    }

    /// The borrowed targets of a fit: one column ([`YArray::labels`]) or, for a 2-D y, its
    /// rows (C-contiguous), which [`FitLabels::targets`] turns into multi-output targets.
    pub fn fit_labels(&self) -> Result<FitLabels<'_>> {
        Ok(match self {
            YArray::CodeRows(a) => FitLabels::CodeRows(matrix_rows(a, "y")?, a.shape()[1]),
            YArray::ValueRows(a) => FitLabels::ValueRows(matrix_rows(a, "y")?, a.shape()[1]),
            _ => FitLabels::Column(self.labels()?),
        })
    }
}

/// A C-contiguous 2-D array's values, row-major, borrowed.
fn matrix_rows<'a, T: numpy::Element>(
    a: &'a PyReadonlyArray2<'_, T>,
    name: &str,
) -> Result<&'a [T]> {
    if !a.is_c_contiguous() {
        return Err(binding_error(format!(
            "{name} must be a C-contiguous 2-D array"
        )));
    }
    a.as_slice()
        .map_err(|_| binding_error(format!("{name} must be a C-contiguous 2-D array")))
}

/// The targets of a fit: one column, or rows of several outputs (`(values, m)`).
#[derive(Clone, Copy)]
pub enum FitLabels<'a> {
    /// One output.
    Column(Labels<'a>),
    /// uint32 class codes, `m` per row.
    CodeRows(&'a [u32], usize),
    /// float64 values, `m` per row.
    ValueRows(&'a [f64], usize),
}

impl<'a> FitLabels<'a> {
    /// The core's checked targets: `n_classes` classes for one output (0: regression),
    /// `output_classes` (one count per output) for class codes of several outputs.
    pub fn targets(
        self,
        n_classes: usize,
        output_classes: Option<&'a [usize]>,
        buf: &'a mut Vec<u32>,
    ) -> Result<Targets<'a>> {
        match (self, output_classes) {
            (FitLabels::Column(labels), None) => labels.targets(n_classes, buf),
            (FitLabels::CodeRows(y, m), Some(c)) if c.len() == m => Targets::multi_classes(y, c),
            (FitLabels::ValueRows(y, m), None) if n_classes == 0 => Targets::multi_regression(y, m),
            _ => Err(binding_error(
                "argument 'y': a 2-D y needs output_classes (uint32 codes, one class count per \
                 column) or float64 values (regression, n_classes = 0); a 1-D y needs no \
                 output_classes",
            )),
        }
    }
}

/// A borrowed target column: class codes, or values (real targets or codes as floats).
#[derive(Clone, Copy)]
pub enum Labels<'a> {
    /// uint32 class codes.
    Codes(&'a [u32]),
    /// float64 values.
    Values(&'a [f64]),
}

impl<'a> Labels<'a> {
    /// The core's checked targets for a model with `n_classes` classes (0: regression).
    /// Float class codes are converted into `buf`.
    pub fn targets(self, n_classes: usize, buf: &'a mut Vec<u32>) -> Result<Targets<'a>> {
        match (self, n_classes) {
            (Labels::Values(v), 0) => Targets::regression(v),
            (Labels::Codes(_), 0) => Err(binding_error(
                "regression targets (n_classes = 0) must be float64",
            )),
            (Labels::Codes(c), k) => Targets::classes(c, k),
            (Labels::Values(v), k) => {
                *buf = class_codes(v, k)?;
                Targets::classes(buf, k)
            }
        }
    }

    /// The values as float64, for the measures that take targets as real numbers.
    pub fn values(self, buf: &'a mut Vec<f64>) -> &'a [f64] {
        match self {
            Labels::Values(v) => v,
            Labels::Codes(c) => {
                *buf = c.iter().map(|&k| f64::from(k)).collect();
                buf
            }
        }
    }
}

/// A contiguous vector (y or sample_weight), borrowed.
pub fn vector<'a, T: numpy::Element>(
    a: &'a PyReadonlyArray1<'_, T>,
    name: &str,
) -> Result<&'a [T]> {
    a.as_slice()
        .map_err(|_| binding_error(format!("{name} must be a contiguous 1-D array")))
}

/// Refuses, before the work, a result of `dims` float64 values (their product) that memory
/// cannot hold: sizes read from a model file (features, trees, depths) are checked this way
/// by every result that takes no X, since the core builds per-tree rows and then joins them
/// (two copies).
pub fn ensure_result_fits(dims: &[usize], what: &'static str) -> Result<()> {
    let values = dims.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
    crate::error::ensure_allocatable(values.unwrap_or(usize::MAX), 16, what)
}

/// `v` as an `(n, w)` NumPy array (row-major).
pub fn to_rows<T: numpy::Element>(
    py: Python<'_>,
    v: Vec<T>,
    n: usize,
    w: usize,
) -> PyResult<Bound<'_, numpy::PyArray2<T>>> {
    use numpy::IntoPyArray;
    let a = numpy::ndarray::Array2::from_shape_vec((n, w), v)
        .map_err(|e| ForestError::Internal(e.to_string()))?;
    Ok(a.into_pyarray(py))
}

/// `v` as a NumPy array of shape `dims` (row-major).
pub fn to_shape<'py, T: numpy::Element>(
    py: Python<'py>,
    v: Vec<T>,
    dims: &[usize],
) -> PyResult<Bound<'py, numpy::PyArrayDyn<T>>> {
    use numpy::IntoPyArray;
    let a = numpy::ndarray::ArrayD::from_shape_vec(numpy::ndarray::IxDyn(dims), v)
        .map_err(|e| ForestError::Internal(e.to_string()))?;
    Ok(a.into_pyarray(py))
}

/// Zlib's CRC-32 of the `rows` of a dense X (float32 or float64, any strides), continued
/// from `crc`: every value as a little-endian float64, row after row. The same number as
/// `zlib.crc32(np.ascontiguousarray(X[rows], dtype=np.float64), crc)`, without the two
/// copies of the rows that takes (the training fingerprint of every fit and check).
#[pyfunction]
#[pyo3(signature = (x, rows, crc = 0))]
pub fn rows_crc32(
    x: &Bound<'_, PyAny>,
    rows: PyReadonlyArray1<'_, i64>,
    crc: u32,
) -> PyResult<u32> {
    let rows = vector(&rows, "rows")?;
    let mut hasher = crc32fast::Hasher::new_with_initial(crc);
    if let Ok(a) = x.extract::<PyReadonlyArray2<'_, f32>>() {
        hash_rows(&a.as_array(), rows, f64::from, &mut hasher)?;
    } else if let Ok(a) = x.extract::<PyReadonlyArray2<'_, f64>>() {
        hash_rows(&a.as_array(), rows, |v| v, &mut hasher)?;
    } else {
        return Err(PyTypeError::new_err(
            "argument 'x': must be a 2-D numpy array of dtype float32 or float64",
        ));
    }
    Ok(hasher.finalize())
}

/// Feeds rows `rows` of `x` to `hasher` as float64 bytes, a row's values in column order.
fn hash_rows<T: Copy>(
    x: &numpy::ndarray::ArrayView2<'_, T>,
    rows: &[i64],
    to_f64: impl Fn(T) -> f64,
    hasher: &mut crc32fast::Hasher,
) -> PyResult<()> {
    let n = x.nrows();
    // Values go through a small buffer: CRC-32 runs faster on long inputs than 8 bytes at a time.
    let mut buf = [0u8; 4096];
    let mut len = 0;
    for &r in rows {
        let row = usize::try_from(r).ok().filter(|&r| r < n).ok_or_else(|| {
            PyIndexError::new_err(format!("row {r} is out of range for {n} rows"))
        })?;
        for &v in x.row(row) {
            buf[len..len + 8].copy_from_slice(&to_f64(v).to_le_bytes());
            len += 8;
            if len == buf.len() {
                hasher.update(&buf);
                len = 0;
            }
        }
    }
    hasher.update(&buf[..len]);
    Ok(())
}
