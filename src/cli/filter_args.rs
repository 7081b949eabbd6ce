//! `--filter/-Y EXPR` and `--pairs`, shared by every subcommand that shows PDUs (`decode`,
//! `records`, `stats`, `check`, `report`, `capture`): the flags, and the one function that turns
//! them into the engine's filters (`kinspect::query`).

use kinspect::engine::{self, Filters, Sink};
use kinspect::query::{Pairs, Query};
use std::sync::Arc;

/// The display filter's help: the language in a few lines, its fields named from
/// [`kinspect::query::FIELDS`] (the list the parser and the "unknown field" error use).
fn filter_help() -> String {
    let fields: Vec<&str> = kinspect::query::FIELDS.iter().map(|f| f.0).collect();
    format!(
        "Show only the PDUs this expression selects (as tshark's -Y): fields {}, or a path \
         body.Topics[].Name ([] any element); operators == != < <= > >= contains matches in \
         {{a, b, lo..hi}}; and or not (&& || !); parentheses; a field alone tests presence. \
         Repeated values: some value must match. Example: \
         -Y 'api == Produce and error == NOT_LEADER_OR_FOLLOWER'. Capture notes are not shown \
         with it.",
        fields.join(", ")
    )
}

#[derive(clap::Args, Debug, Clone, Default)]
pub struct FilterArgs {
    #[arg(long = "filter", short = 'Y', value_name = "EXPR", help = filter_help())]
    pub filter: Option<String>,
    /// With --filter: show each selected request with its response and each selected response
    /// with its request (held until its response comes, up to limits::MAX_PAIRS_IN_FLIGHT).
    /// Runs on one thread.
    #[arg(long, requires = "filter")]
    pub pairs: bool,
}

/// What the flags make: the engine's filters, and the query when `--pairs` wants a [`Pairs`]
/// sink in front of the output.
pub struct Compiled {
    pub query: Option<Arc<Query>>,
    pub pairs: bool,
}

impl FilterArgs {
    /// Compiles the expression and adds it to `filters` (unless `--pairs`, whose sink applies
    /// it). An error is the message with the expression and a caret under its column.
    pub fn apply(
        &self,
        proto: &kinspect::protocol::Protocol,
        filters: &mut Filters,
    ) -> Result<Compiled, String> {
        let Some(text) = &self.filter else {
            return Ok(Compiled {
                query: None,
                pairs: false,
            });
        };
        let q = Arc::new(
            Query::compile(text, proto).map_err(|e| format!("--filter: {}", e.pointed(text)))?,
        );
        if !self.pairs {
            filters.more.push(q.clone() as Arc<dyn engine::Filter>);
        }
        Ok(Compiled {
            query: Some(q),
            pairs: self.pairs,
        })
    }
}

impl Compiled {
    /// The sink to run: `sink` itself, or `sink` behind a [`Pairs`] (on one thread).
    pub fn pairs_of<S: Sink>(&self, sink: S) -> Option<Pairs<S>> {
        match (&self.query, self.pairs) {
            (Some(q), true) => Some(Pairs::new(sink, Arc::clone(q))),
            _ => None,
        }
    }

    /// Runs `inputs` into `sink` on this thread, behind `--pairs` when asked.
    pub fn run<'a, S: Sink>(
        &self,
        inputs: impl IntoIterator<Item = engine::Input<'a>>,
        opts: &engine::Options,
        mut sink: S,
    ) -> engine::Outcome {
        match self.pairs_of(&mut sink) {
            Some(mut pairs) => engine::run(inputs, opts, &mut pairs),
            None => engine::run(inputs, opts, &mut sink),
        }
    }

    /// Runs `inputs` into `sink`, on two threads when `opts.threads` allows (see
    /// [`engine::run_split`]); behind `--pairs`, which follows the conversation in order, on one.
    pub fn run_split<'a, S: engine::Split>(
        &self,
        inputs: impl IntoIterator<Item = engine::Input<'a>>,
        opts: &engine::Options,
        sink: &mut S,
    ) -> engine::Outcome {
        match self.pairs_of(&mut *sink) {
            Some(mut pairs) => engine::run(inputs, opts, &mut pairs),
            None => engine::run_split(inputs, opts, sink),
        }
    }

    /// Whether the filter reads record batches (so they must be decoded).
    pub fn reaches_records(&self) -> bool {
        self.query.as_ref().is_some_and(|q| q.reaches_records())
    }
}
