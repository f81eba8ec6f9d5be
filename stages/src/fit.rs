//! Fitting: how the selected files fit a token budget. The budget is split,
//! the summarisation ladder picks each file's tier, oversized files are
//! sliced, token counts are exact, and the assembler writes the prompt.

pub mod assembler;
pub mod budget;
pub mod ladder;
pub mod line_map;
pub mod model;
pub mod slice;
pub mod tokens;
