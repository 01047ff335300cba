//! NumPy arrays in, core views out, without copies.
//!
//! X is borrowed in place when it is float32 or float64 and C- or Fortran-contiguous; any
//! other array is refused with `TypeError` (the Python layer converts once before calling).

use numpy::{PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

use crate::data::{Layout, Matrix};
use crate::error::Result;

/// A borrowed 2-D input matrix of either float type.
pub enum XArray<'py> {
    /// float32 input.
    F32(PyReadonlyArray2<'py, f32>),
    /// float64 input.
    F64(PyReadonlyArray2<'py, f64>),
}

impl<'py> XArray<'py> {
    pub fn extract(x: &Bound<'py, PyAny>) -> PyResult<Self> {
        if let Ok(a) = x.extract::<PyReadonlyArray2<'py, f32>>() {
            return Ok(XArray::F32(a));
        }
        if let Ok(a) = x.extract::<PyReadonlyArray2<'py, f64>>() {
            return Ok(XArray::F64(a));
        }
        Err(PyTypeError::new_err(
            "X must be a 2-D numpy array of dtype float32 or float64",
        ))
    }
}

/// Views a read-only array as a [`Matrix`] in its own memory order.
pub fn matrix<'a, T: numpy::Element + crate::data::Feature>(
    a: &'a PyReadonlyArray2<'_, T>,
) -> PyResult<Result<Matrix<'a, T>>> {
    let (n, p) = (a.shape()[0], a.shape()[1]);
    let layout = if a.is_c_contiguous() {
        Layout::RowMajor
    } else if a.is_fortran_contiguous() {
        Layout::ColumnMajor
    } else {
        return Err(PyTypeError::new_err("X must be C- or Fortran-contiguous"));
    };
    let data = a
        .as_slice()
        .map_err(|_| PyTypeError::new_err("X must be C- or Fortran-contiguous"))?;
    Ok(Matrix::new(data, n, p, layout))
}

/// Runs `$body` with `$m` bound to the `Matrix` of `$x` (an `XArray`), for either dtype.
macro_rules! with_matrix {
    ($x:expr, |$m:ident| $body:expr) => {
        match &$x {
            $crate::python::arrays::XArray::F32(a) => {
                let $m = $crate::python::arrays::matrix(a)??;
                $body
            }
            $crate::python::arrays::XArray::F64(a) => {
                let $m = $crate::python::arrays::matrix(a)??;
                $body
            }
        }
    };
}
pub(crate) use with_matrix;

/// Training targets as passed: uint32 class codes, borrowed in place, or float64 values
/// (regression targets, or class codes as floats).
pub enum YArray<'py> {
    /// uint32 class codes.
    Codes(PyReadonlyArray1<'py, u32>),
    /// float64 values.
    Values(PyReadonlyArray1<'py, f64>),
}

impl<'py> YArray<'py> {
    pub fn extract(y: &Bound<'py, PyAny>) -> PyResult<Self> {
        if let Ok(a) = y.extract::<PyReadonlyArray1<'py, u32>>() {
            return Ok(YArray::Codes(a));
        }
        if let Ok(a) = y.extract::<PyReadonlyArray1<'py, f64>>() {
            return Ok(YArray::Values(a));
        }
        Err(PyTypeError::new_err(
            "argument 'y': must be a 1-D numpy array of dtype uint32 (class codes) or float64",
        ))
    }
}

/// A contiguous vector (y or sample_weight), borrowed.
pub fn vector<'a, T: numpy::Element>(
    a: &'a PyReadonlyArray1<'_, T>,
    name: &str,
) -> PyResult<&'a [T]> {
    a.as_slice()
        .map_err(|_| PyTypeError::new_err(format!("{name} must be a contiguous 1-D array")))
}
