//! Comparing two sets of grades: rubric versions on the same sessions, recorded results, or
//! agent arms graded by one rubric.

pub mod stats;
