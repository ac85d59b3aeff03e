//! One QuickJS runtime, kept by one thread of the pool (`pool.rs`) and reused
//! run after run. A run without a keeper (a save's check, the test call)
//! gets a fresh context, so nothing one script leaves behind is seen by the
//! next. An endpoint's deliveries run in a sandbox of their own, kept by the
//! thread for that endpoint and script ([`Sandbox::run_kept`]): the script's
//! top level runs once, then `handler` once per delivery, in the same context;
//! its globals are its own endpoint's and no other's, and its memory limit is
//! its own runtime's.
//!
//! The context holds the language and nothing more: no module loader, no
//! host functions, no `Date` (no clock), no `Math.random`, no
//! `queueMicrotask`, `Promise`, `WeakRef`/`FinalizationRegistry` (no job
//! queue that would outlive a run), no typed arrays (`Atomics.wait` could
//! block the thread where no interrupt reaches it). What is left is
//! deterministic: the same script on the same input gives the same bytes
//! (in a kept context, unless the script itself keeps state between runs).
//!
//! Limits: the runtime's memory limit, a stack limit, and an interrupt
//! handler that stops the script at its deadline (QuickJS calls it every
//! few thousand instructions, loops included). A run that hit a limit, or
//! that left anything in the runtime's job queue, gives the runtime up: the
//! thread makes a new one for its next run.

use std::{cell::Cell, rc::Rc, time::Instant};

use rquickjs::{context::intrinsic, CatchResultExt, CaughtError, Context, Ctx, Function, Object, Runtime, Value};

use super::{Failure, Limits};

/// The file name scripts' errors and stacks name; lines are counted in it.
const FILE: &str = "transformation.js";

/// What a run returns before validation: the handler's result, each part as
/// the sandbox's `JSON.stringify` wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawResult {
    /// JSON of `{method, url, headers, cancel}` (the parts the handler returned).
    pub envelope: String,
    /// JSON of `payload`, or `None` when it is not JSON (`undefined`, a function).
    pub payload: Option<String>,
}

/// A runtime and what its interrupt handler reads.
pub struct Sandbox {
    /// The context [`Sandbox::run_kept`] runs in, once its top level ran;
    /// dropped before the runtime.
    kept: Option<Context>,
    runtime: Runtime,
    deadline: Rc<Cell<Option<Instant>>>,
    interrupted: Rc<Cell<bool>>,
    limits: Limits,
}

impl Sandbox {
    /// A runtime under `limits`.
    pub fn new(limits: Limits) -> Result<Sandbox, Failure> {
        let runtime = Runtime::new().map_err(|_| Failure::internal("the JavaScript runtime could not be made"))?;
        runtime.set_memory_limit(limits.memory);
        runtime.set_max_stack_size(limits.stack);
        let deadline: Rc<Cell<Option<Instant>>> = Rc::default();
        let interrupted: Rc<Cell<bool>> = Rc::default();
        let (d, i) = (deadline.clone(), interrupted.clone());
        runtime.set_interrupt_handler(Some(Box::new(move || {
            let over = d.get().is_some_and(|at| Instant::now() >= at);
            if over {
                i.set(true);
            }
            over
        })));
        Ok(Sandbox { kept: None, runtime, deadline, interrupted, limits })
    }

    /// Runs `script` in a fresh context: its top level, then (with `input`,
    /// JSON of the webhook) `handler(input)`. Without `input` it only checks
    /// that the script compiles and defines `handler`. Answers whether the
    /// runtime may be reused.
    pub fn run(&self, script: &str, input: Option<&str>) -> (Result<Option<RawResult>, Failure>, bool) {
        self.limited(|| {
            let context = self.fresh_context()?;
            context.with(|ctx| {
                let handler = self.top_level(&ctx, script)?;
                let Some(input) = input else { return Ok(None) };
                self.call(&ctx, handler, input).map(Some)
            })
        })
    }

    /// Runs `handler(input)` in this sandbox's kept context, running
    /// `script`'s top level first when the context is new. The caller keeps
    /// the sandbox for this script only. Answers whether it may be reused.
    pub fn run_kept(&mut self, script: &str, input: &str) -> (Result<RawResult, Failure>, bool) {
        if self.kept.is_none() {
            let made = self.limited(|| {
                let context = self.fresh_context()?;
                context.with(|ctx| self.top_level(&ctx, script).map(|_| ()))?;
                Ok(context)
            });
            match made {
                (Ok(context), _) => self.kept = Some(context),
                (Err(f), reusable) => return (Err(f), reusable),
            }
        }
        let Some(context) = &self.kept else { return (Err(Failure::internal("the kept context is gone")), false) };
        self.limited(|| {
            context.with(|ctx| {
                let handler: Value<'_> = ctx.globals().get("handler").map_err(|e| self.failure(&ctx, e, false))?;
                let Some(handler) = handler.into_function() else {
                    return Err(Failure::run("the script's handler is no longer a function", None, None));
                };
                self.call(&ctx, handler, input)
            })
        })
    }

    /// Bytes the runtime holds now.
    pub fn memory_used(&self) -> usize {
        usize::try_from(self.runtime.memory_usage().malloc_size).unwrap_or(usize::MAX)
    }

    /// Runs `f` within the time limit; answers its result, a limit's failure
    /// in place of the error it caused, and whether the runtime may be reused.
    fn limited<T>(&self, f: impl FnOnce() -> Result<T, Failure>) -> (Result<T, Failure>, bool) {
        self.interrupted.set(false);
        self.deadline.set(Some(Instant::now() + self.limits.timeout));
        let result = f();
        self.deadline.set(None);
        let result = result.map_err(|f| match f {
            _ if self.interrupted.get() => Failure::timeout(self.limits.timeout),
            f => f,
        });
        // A limit hit, or anything queued to run later: not reused.
        let reusable = result.as_ref().map_or_else(|f| f.keeps_runtime(), |_| true) && !self.runtime.is_job_pending();
        (result, reusable)
    }

    /// A context with the language alone ([`strip`]ped).
    fn fresh_context(&self) -> Result<Context, Failure> {
        type Intrinsics = (
            intrinsic::Eval,
            intrinsic::RegExpCompiler,
            intrinsic::RegExp,
            intrinsic::Json,
            intrinsic::MapSet,
            intrinsic::Proxy,
        );
        let context = Context::custom::<Intrinsics>(&self.runtime).map_err(|_| Failure::memory(self.limits.memory))?;
        context.with(|ctx| strip(&ctx).map_err(|e| self.failure(&ctx, e, false)))?;
        Ok(context)
    }

    /// Runs `script`'s top level in `ctx`; answers its `handler`.
    fn top_level<'js>(&self, ctx: &Ctx<'js>, script: &str) -> Result<Function<'js>, Failure> {
        let mut options = rquickjs::context::EvalOptions::default();
        options.global = true;
        options.strict = false;
        options.filename = Some(FILE.into());
        ctx.eval_with_options::<(), _>(script, options).catch(ctx).map_err(|e| self.caught(e, true))?;
        let handler: Value<'_> = ctx.globals().get("handler").map_err(|e| self.failure(ctx, e, true))?;
        handler
            .into_function()
            .ok_or_else(|| Failure::compile("the script does not define a function named handler", None, None))
    }

    /// `handler(input)`, its result as JSON texts.
    fn call<'js>(&self, ctx: &Ctx<'js>, handler: Function<'js>, input: &str) -> Result<RawResult, Failure> {
        let input = ctx.json_parse(input).map_err(|e| self.failure(ctx, e, false))?;
        let out: Value<'_> = handler.call((input,)).catch(ctx).map_err(|e| self.caught(e, false))?;
        self.parts(ctx, out)
    }

    /// The handler's result as JSON texts.
    fn parts<'js>(&self, ctx: &Ctx<'js>, out: Value<'js>) -> Result<RawResult, Failure> {
        let Some(obj) = out.into_object() else {
            return Err(Failure::run("the handler did not return an object (return webhook;)", None, None));
        };
        let pick = Object::new(ctx.clone()).map_err(|e| self.failure(ctx, e, false))?;
        for key in ["method", "url", "headers", "cancel"] {
            let v: Value<'_> = obj.get(key).catch(ctx).map_err(|e| self.caught(e, false))?;
            pick.set(key, v).map_err(|e| self.failure(ctx, e, false))?;
        }
        let payload: Value<'_> = obj.get("payload").catch(ctx).map_err(|e| self.caught(e, false))?;
        let text = |v: Value<'js>| -> Result<Option<String>, Failure> {
            let s = ctx.json_stringify(v).catch(ctx).map_err(|e| self.caught(e, false))?;
            s.map(|s| s.to_string().map_err(|e| self.failure(ctx, e, false))).transpose()
        };
        let envelope = text(pick.into_value())?.unwrap_or_else(|| "{}".into());
        Ok(RawResult { envelope, payload: text(payload)? })
    }

    /// A failure from a caught JavaScript error: its class and line, and the
    /// script's own message kept apart (it may quote the event's data).
    fn caught(&self, e: CaughtError<'_>, compiling: bool) -> Failure {
        if self.interrupted.get() {
            return Failure::timeout(self.limits.timeout);
        }
        match e {
            CaughtError::Exception(ex) => {
                let message = ex.message().unwrap_or_default();
                let name: Option<String> = ex.as_object().get::<_, Option<String>>("name").ok().flatten();
                let line = ex.stack().as_deref().and_then(line_of).or_else(|| {
                    // A syntax error's stack may be empty; QuickJS puts the place in the message.
                    line_of(&message)
                });
                let name = name.as_deref().and_then(known_error_name);
                if name == Some("InternalError") && message.contains("out of memory") {
                    return Failure::memory(self.limits.memory);
                }
                if name == Some("RangeError")
                    && (message.contains("stack overflow") || message.contains("call stack size"))
                {
                    return Failure::stack();
                }
                let what = name.unwrap_or("an exception");
                if compiling && name == Some("SyntaxError") {
                    let reason = match line {
                        Some(l) => format!("SyntaxError at line {l}"),
                        None => "SyntaxError".to_string(),
                    };
                    return Failure::compile(&reason, line, Some(message));
                }
                let place = line.map(|l| format!(" at line {l}")).unwrap_or_default();
                let reason = format!("the script threw {what}{place}");
                if compiling {
                    Failure::compile(&reason, line, Some(message))
                } else {
                    Failure::run(&reason, line, Some(message))
                }
            }
            // QuickJS throws `null` when it is out of memory even for the
            // error it would throw; a script's own `throw null` reads the same.
            CaughtError::Value(v) if v.is_null() => Failure::memory(self.limits.memory),
            CaughtError::Value(_) => {
                let reason = "the script threw a value that is not an Error";
                if compiling {
                    Failure::compile(reason, None, None)
                } else {
                    Failure::run(reason, None, None)
                }
            }
            CaughtError::Error(e) => self.plain(e, compiling),
        }
    }

    fn failure(&self, ctx: &Ctx<'_>, e: rquickjs::Error, compiling: bool) -> Failure {
        if e.is_exception() {
            return self.caught(CaughtError::from_error(ctx, e), compiling);
        }
        self.plain(e, compiling)
    }

    fn plain(&self, e: rquickjs::Error, compiling: bool) -> Failure {
        if self.interrupted.get() {
            return Failure::timeout(self.limits.timeout);
        }
        match e {
            rquickjs::Error::Allocation => Failure::memory(self.limits.memory),
            rquickjs::Error::FromJs { .. } | rquickjs::Error::Utf8(_) if !compiling => {
                Failure::run("the handler's result could not be read", None, None)
            }
            _ => Failure::internal("the JavaScript runtime failed"),
        }
    }
}

/// Removes what would give a script the time, randomness, or work that
/// outlives its run.
fn strip(ctx: &Ctx<'_>) -> rquickjs::Result<()> {
    let globals = ctx.globals();
    globals.remove("queueMicrotask")?;
    let math: Object<'_> = globals.get("Math")?;
    math.remove("random")?;
    Ok(())
}

/// The first `transformation.js:<line>` in a stack or message.
fn line_of(text: &str) -> Option<u32> {
    let at = text.find(FILE)? + FILE.len();
    let rest = text[at..].strip_prefix(':')?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// An error's name as a failure may say it: only the language's own names
/// (a script may name its errors anything, the event's data included).
fn known_error_name(name: &str) -> Option<&'static str> {
    [
        "Error",
        "TypeError",
        "RangeError",
        "ReferenceError",
        "SyntaxError",
        "EvalError",
        "URIError",
        "InternalError",
        "AggregateError",
    ]
    .into_iter()
    .find(|n| *n == name)
}
