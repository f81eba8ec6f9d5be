//! aic
