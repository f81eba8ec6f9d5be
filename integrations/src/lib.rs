//! integrations
