//! AI paper generation (论文生成), as an engine: no HTTP, no SQL. The server supplies the
//! library through a retrieval trait and the model through `llm`; this crate plans the outline
//! with its word budgets, writes sections from it, maps the model's citation markers onto real
//! records and formats the reference list by GB/T 7714-2015.

pub mod citations;
pub mod gbt7714;
pub mod generate;
pub mod grounding;
pub mod outline;
pub mod package;
pub mod reffile;
pub mod thesis;
