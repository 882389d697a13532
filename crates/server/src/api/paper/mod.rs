//! AI paper generation (论文生成: `ai_paper_info_api`, `paper_info_api`): the library as the
//! generator's reference source. The API and the writing task come next.

pub mod retrieval;
