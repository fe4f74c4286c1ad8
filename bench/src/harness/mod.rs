//! What every workload shares: timing, result rows, correctness checks,
//! a seeded generator, and facts about the machine.

pub mod check;
pub mod probe;
pub mod report;
pub mod rng;
pub mod sys;
pub mod timing;

pub use check::{json_eq, Fail, Scalar};
pub use report::{PeerInfo, Report, Row, Session, Status};
pub use timing::{Case, Plan};
