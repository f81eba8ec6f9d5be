//! `aic mcp`: the stdio MCP server, built on rmcp.
//!
//! - **Tools**: the nine of [`tools::tools`], listed in a fixed order, each with
//!   an input schema, an output schema and annotations; results carry
//!   `structuredContent` and the same JSON as a text block, except
//!   `aic_compile`'s, whose text block is the compiled prompt and whose
//!   structured content is its metadata (the prompt is sent once).
//! - **Prompts**: the specification's prompt commands ("show aic status", …),
//!   [`prompts::prompts`]; each tells the model which tool to call and how to
//!   show its answer.
//! - **Resources**: `aic://rules-analysis`, the audit of the project's agent
//!   rule and hook files ([`crate::rules`], the same JSON as `aic rules
//!   --json`) for the call's project root; `resources/read` of any other URI
//!   is −32002 (resource not found).
//! - **Errors**: bad arguments, a missing repository or a budget problem are a
//!   tool result with `isError` (the model reads it); an unknown tool is
//!   JSON-RPC −32602 and an unknown method −32601 (MCP's codes); an internal
//!   failure or a compile over the timeout (default 30 s) is −32603 with a
//!   sanitised message. Nothing but JSON-RPC reaches stdout; logs go to stderr.
//! - **Concurrency**: tokio only moves messages. Compiles (and inspects) run on
//!   blocking threads that fan out on the rayon pool, one at a time, in arrival
//!   order (a fair queue); diagnostics answer meanwhile. A timed-out or
//!   cancelled compile is told to stop at its next stage boundary, and the queue
//!   moves on at once.
//! - **Lifecycle**: the server's session row is written after the first
//!   response can go out (crash back-fill, retention); stdin EOF, SIGINT and
//!   SIGTERM stop it gracefully with exit code 0.

pub mod handlers;
pub mod prompts;
pub mod tools;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, GetPromptRequestParams,
    GetPromptResponse, Implementation, ListPromptsResult, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, ProgressNotificationParam, ReadResourceRequestParams,
    ReadResourceResponse, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use serde::de::DeserializeOwned;

use crate::clock::iso;
use crate::history::compilations::{ToolInvocationRecord, record_tool_invocation};
use crate::history::servers::{ServerSession, self_check};
use crate::host::Host;
use handlers::{Connection, Probes, ToolFailure, ToolResult};
use tools::parse_args;

/// The URI of the rules analysis resource ([`crate::rules`]).
pub const RULES_ANALYSIS_URI: &str = "aic://rules-analysis";

/// A compile slower than this is cancelled and answered with an error;
/// `AIC_MCP_COMPILE_TIMEOUT_MS` overrides it.
pub const COMPILE_TIMEOUT: Duration = Duration::from_secs(30);

/// How long the server waits for the client's `roots/list` answer.
const ROOTS_TIMEOUT: Duration = Duration::from_secs(2);

/// The MCP server.
#[derive(Clone)]
pub struct AicServer {
    inner: Arc<Inner>,
}

struct Inner {
    tools: Vec<Tool>,
    /// Compiles run one at a time, in arrival order (tokio's mutex is fair).
    compile_queue: tokio::sync::Mutex<()>,
    session_id: String,
    probes: Probes,
    compile_timeout: Duration,
    /// The first `file://` root the client listed, until it says they changed.
    client_root: Mutex<Option<PathBuf>>,
    /// The process's database, memo and clock.
    host: Arc<Host>,
}

impl std::fmt::Debug for AicServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AicServer")
            .field("session_id", &self.inner.session_id)
            .finish_non_exhaustive()
    }
}

impl AicServer {
    /// A server whose connection has the session id `session_id`, running on
    /// `host`.
    pub fn new(session_id: String, host: Arc<Host>) -> Self {
        let compile_timeout = std::env::var("AIC_MCP_COMPILE_TIMEOUT_MS")
            .ok()
            .and_then(|ms| ms.parse::<u64>().ok())
            .map_or(COMPILE_TIMEOUT, Duration::from_millis);
        Self {
            inner: Arc::new(Inner {
                tools: tools::tools(),
                compile_queue: tokio::sync::Mutex::new(()),
                session_id,
                probes: Probes::default(),
                compile_timeout,
                client_root: Mutex::new(None),
                host,
            }),
        }
    }

    fn connection(&self, context: &RequestContext<RoleServer>) -> Connection {
        let client = context
            .peer
            .peer_info()
            .map(|info| info.client_info.name.to_lowercase())
            .unwrap_or_default();
        let editor_id = if client.contains("claude") {
            "claude-code"
        } else if client.contains("cursor") || std::env::var_os("CURSOR_TRACE_ID").is_some() {
            "cursor"
        } else if std::env::var_os("CLAUDE_PROJECT_DIR").is_some() {
            "claude-code"
        } else {
            "generic"
        };
        Connection {
            session_id: self.inner.session_id.clone(),
            editor_id: editor_id.to_owned(),
        }
    }

    /// The project root of a call (issue: projectRoot resolution): the argument
    /// (relative to the server's working directory), else the client's first
    /// workspace root when it offers roots, else `CLAUDE_PROJECT_DIR`, else the
    /// project around the working directory ([`crate::root::discover_root`]:
    /// its git work tree or the directory holding `aic.config.json`); a
    /// leading `~` is the home directory. The root policy
    /// ([`crate::root`]) refuses `/`, the home directory itself, and system and
    /// credential directories.
    async fn project_root(
        &self,
        argument: Option<&str>,
        context: &RequestContext<RoleServer>,
    ) -> Result<PathBuf, ToolFailure> {
        let root = match argument.map(str::trim).filter(|s| !s.is_empty()) {
            Some(given) => {
                let path = match given.strip_prefix("file://") {
                    Some(uri_path) => PathBuf::from(percent_decode(uri_path)),
                    None => crate::root::expand_home(Path::new(given)),
                };
                if path.is_absolute() {
                    path
                } else {
                    std::env::current_dir().unwrap_or_default().join(path)
                }
            }
            None => match self.client_root(context).await {
                Some(root) => root,
                None => std::env::var_os("CLAUDE_PROJECT_DIR")
                    .map(PathBuf::from)
                    .filter(|p| p.is_absolute())
                    .or_else(|| {
                        std::env::current_dir()
                            .ok()
                            .map(|cwd| crate::root::discover_root(&cwd).0)
                    })
                    .unwrap_or_default(),
            },
        };
        refuse_broad_root(&root)?;
        Ok(root)
    }

    // Roots are deprecated by the 2026-07-28 revision (SEP-2577), but Claude Code
    // and the other clients that speak `initialize` still offer them.
    #[allow(deprecated)]
    async fn client_root(&self, context: &RequestContext<RoleServer>) -> Option<PathBuf> {
        if let Ok(cached) = self.inner.client_root.lock()
            && let Some(root) = cached.clone()
        {
            return Some(root);
        }
        let offers_roots = context
            .peer
            .peer_info()
            .is_some_and(|info| info.capabilities.roots.is_some());
        if !offers_roots {
            return None;
        }
        let listed = tokio::time::timeout(ROOTS_TIMEOUT, context.peer.list_roots())
            .await
            .ok()?
            .ok()?;
        let root = listed
            .roots
            .iter()
            .find_map(|root| root.uri.strip_prefix("file://").map(percent_decode))
            .map(PathBuf::from)?;
        if let Ok(mut cached) = self.inner.client_root.lock() {
            *cached = Some(root.clone());
        }
        Some(root)
    }

    /// Runs a tool body on a blocking thread.
    async fn blocking(work: impl FnOnce() -> ToolResult + Send + 'static) -> ToolResult {
        tokio::task::spawn_blocking(work)
            .await
            .unwrap_or_else(|error| Err(ToolFailure::Internal(panic_message(&error))))
    }

    /// Runs a compile-like tool body in the compile queue, with the timeout and
    /// the client's cancellation; both set the body's cancel flag.
    async fn queued(
        &self,
        context: &RequestContext<RoleServer>,
        work: impl FnOnce(Arc<AtomicBool>) -> ToolResult + Send + 'static,
    ) -> ToolResult {
        let progress = context.meta.get_progress_token();
        let notify = |step: f64, message: &str| {
            let peer = context.peer.clone();
            let token = progress.clone();
            let message = message.to_owned();
            async move {
                if let Some(token) = token {
                    let _ = peer
                        .notify_progress(
                            ProgressNotificationParam::new(token, step)
                                .with_total(3.0)
                                .with_message(message),
                        )
                        .await;
                }
            }
        };
        notify(1.0, "queued").await;
        let _turn = self.inner.compile_queue.lock().await;
        notify(2.0, "compiling").await;
        let cancel = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&cancel);
        let handle = tokio::task::spawn_blocking(move || work(flag));
        let outcome = tokio::select! {
            joined = handle => joined.unwrap_or_else(|error| Err(ToolFailure::Internal(panic_message(&error)))),
            () = tokio::time::sleep(self.inner.compile_timeout) => {
                cancel.store(true, Ordering::Relaxed);
                tracing::warn!("A compile took longer than {:?}: cancelled", self.inner.compile_timeout);
                return Err(ToolFailure::Internal(format!(
                    "Compilation timed out after {}",
                    human_duration(self.inner.compile_timeout)
                )));
            }
            () = context.ct.cancelled() => {
                cancel.store(true, Ordering::Relaxed);
                return Err(ToolFailure::Cancelled);
            }
        };
        notify(3.0, "done").await;
        outcome
    }

    /// Runs tool `name`; `used_root` receives the project root it resolved.
    async fn dispatch(
        &self,
        name: &str,
        args: Option<&rmcp::model::JsonObject>,
        context: &RequestContext<RoleServer>,
        used_root: &mut Option<PathBuf>,
    ) -> Result<ToolResult, McpError> {
        fn parsed<T: DeserializeOwned>(
            tool: &str,
            args: Option<&rmcp::model::JsonObject>,
        ) -> Result<T, ToolFailure> {
            parse_args(tool, args).map_err(ToolFailure::Tool)
        }
        let result = match name {
            "aic_compile" => {
                async {
                    let args: tools::CompileArgs = parsed(name, args)?;
                    let root = self
                        .project_root(args.project_root.as_deref(), context)
                        .await?;
                    *used_root = Some(root.clone());
                    let connection = self.connection(context);
                    let host = self.inner.host.clone();
                    self.queued(context, move |cancel| {
                        handlers::compile(&host, &args, &root, &connection, cancel)
                    })
                    .await
                }
                .await
            }
            "aic_inspect" => {
                async {
                    let args: tools::InspectArgs = parsed(name, args)?;
                    let root = self
                        .project_root(args.project_root.as_deref(), context)
                        .await?;
                    *used_root = Some(root.clone());
                    let host = self.inner.host.clone();
                    self.queued(context, move |cancel| {
                        handlers::inspect(&host, &args, &root, cancel)
                    })
                    .await
                }
                .await
            }
            "aic_status" => {
                async {
                    let args: tools::StatusArgs = parsed(name, args)?;
                    let root = self
                        .project_root(args.project_root.as_deref(), context)
                        .await?;
                    *used_root = Some(root.clone());
                    let host = self.inner.host.clone();
                    Self::blocking(move || handlers::status(&host, &args, &root)).await
                }
                .await
            }
            "aic_last" => {
                async {
                    let args: tools::ProjectArgs = parsed(name, args)?;
                    let root = self
                        .project_root(args.project_root.as_deref(), context)
                        .await?;
                    *used_root = Some(root.clone());
                    let host = self.inner.host.clone();
                    Self::blocking(move || handlers::last(&host, &root)).await
                }
                .await
            }
            "aic_projects" => {
                async {
                    let _: tools::NoArgs = parsed(name, args)?;
                    let host = self.inner.host.clone();
                    Self::blocking(move || handlers::projects(&host)).await
                }
                .await
            }
            "aic_chat_summary" => {
                async {
                    let args: tools::ChatSummaryArgs = parsed(name, args)?;
                    let root = self
                        .project_root(args.project_root.as_deref(), context)
                        .await?;
                    *used_root = Some(root.clone());
                    let host = self.inner.host.clone();
                    Self::blocking(move || handlers::chat_summary(&host, &args, &root)).await
                }
                .await
            }
            "aic_quality_report" => {
                async {
                    let args: tools::QualityArgs = parsed(name, args)?;
                    let root = self
                        .project_root(args.project_root.as_deref(), context)
                        .await?;
                    *used_root = Some(root.clone());
                    let host = self.inner.host.clone();
                    Self::blocking(move || handlers::quality(&host, &args, &root)).await
                }
                .await
            }
            "aic_compile_spec" => {
                async {
                    let args: tools::CompileSpecArgs = parsed(name, args)?;
                    // The spec needs no repository: a refused default root
                    // only means the default config.
                    let root = self.project_root(None, context).await.unwrap_or_default();
                    *used_root = Some(root.clone());
                    let host = self.inner.host.clone();
                    Self::blocking(move || handlers::compile_spec(&host, &args, &root)).await
                }
                .await
            }
            "aic_model_test" => {
                async {
                    let args: tools::ModelTestArgs = parsed(name, args)?;
                    let root = self
                        .project_root(args.project_root.as_deref(), context)
                        .await?;
                    *used_root = Some(root.clone());
                    let server = self.clone();
                    Self::blocking(move || {
                        handlers::model_test(&server.inner.host, &args, &root, &server.inner.probes)
                    })
                    .await
                }
                .await
            }
            _ => {
                return Err(McpError::invalid_params(
                    format!(
                        "Unknown tool: {name}. The tools are: {}",
                        self.inner
                            .tools
                            .iter()
                            .map(|t| t.name.as_ref())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                    None,
                ));
            }
        };
        Ok(result)
    }
}

/// Refuses `/` and the home directory itself as a project root (the policy
/// of [`crate::root`]), worded for the tool's arguments.
fn refuse_broad_root(root: &Path) -> Result<(), ToolFailure> {
    crate::root::refuse_broad(root).map_err(|error| handlers::compile_failure(error, None))
}

/// `%XX` escapes of a `file://` URI path decoded (invalid escapes kept).
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = text.get(i + 1..i + 3)
            && let Ok(byte) = u8::from_str_radix(hex, 16)
        {
            out.push(byte);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn human_duration(duration: Duration) -> String {
    if duration.subsec_millis() == 0 {
        format!("{}s", duration.as_secs())
    } else {
        format!("{}ms", duration.as_millis())
    }
}

fn panic_message(error: &tokio::task::JoinError) -> String {
    tracing::error!("A tool panicked: {error}");
    "the tool failed unexpectedly; the server is still running (details are on the server's stderr)"
        .to_owned()
}

impl ServerHandler for AicServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_prompts()
                .enable_resources()
                .build(),
        )
            .with_server_info(Implementation::new("aic", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "aic compiles the context for a coding task. Call aic_compile with the user's task as `intent` (and `conversationId` when you have one) before reading files or answering; use the returned prompt as your context.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.inner.tools.clone()))
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        Ok(ListPromptsResult::with_all_items(prompts::prompts()))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        prompts::get(&request.name, request.arguments.as_ref()).map(Into::into)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        Ok(ListResourcesResult::with_all_items(vec![
            rmcp::model::Resource::new(RULES_ANALYSIS_URI, "rules-analysis")
                .with_title("aic rules analysis")
                .with_description(
                    "The project's agent rule and hook files (CLAUDE.md, AGENTS.md, .cursor rules, editor hooks, …): each file's token cost and when it is paid, and findings (error: contradictions; warn: duplicates, globs that match no file, hooks registered twice; info: instructions aic's constraints already carry). The same as `aic rules --json`.",
                )
                .with_mime_type("application/json"),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        if request.uri != RULES_ANALYSIS_URI {
            return Err(McpError::resource_not_found(
                format!(
                    "no resource `{}`: aic serves `{RULES_ANALYSIS_URI}`",
                    request.uri
                ),
                None,
            ));
        }
        let root = self.project_root(None, &context).await.map_err(|failure| {
            let message = match failure {
                ToolFailure::Tool(message) | ToolFailure::Internal(message) => message,
                ToolFailure::ToolStructured(value) => value.to_string(),
                ToolFailure::Cancelled => "cancelled".to_owned(),
            };
            // A resource read has no arguments to name the project with.
            McpError::invalid_params(
                format!(
                    "{message} (a resource read takes no `projectRoot`: start `aic mcp` in the project's directory, or set CLAUDE_PROJECT_DIR)"
                ),
                None,
            )
        })?;
        let analysis = tokio::task::spawn_blocking(move || {
            crate::rules::analyze(&root, crate::root::home().as_deref())
        })
        .await
        .map_err(|error| McpError::internal_error(panic_message(&error), None))?;
        let json = serde_json::to_string_pretty(&analysis)
            .map_err(|error| McpError::internal_error(error.to_string(), None))?;
        Ok(rmcp::model::ReadResourceResult::new(vec![
            rmcp::model::ResourceContents::text(json, RULES_ANALYSIS_URI)
                .with_mime_type("application/json"),
        ])
        .into())
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.inner.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name = request.name.to_string();
        let started = std::time::Instant::now();
        let mut used_root = None;
        let result = self
            .dispatch(&name, request.arguments.as_ref(), &context, &mut used_root)
            .await?;
        tracing::debug!("{name} answered in {:?}", started.elapsed());
        if let Some(root) = used_root {
            let outcome = match &result {
                Ok(_) => "ok",
                Err(ToolFailure::Tool(_) | ToolFailure::ToolStructured(_)) => "tool-error",
                Err(ToolFailure::Cancelled | ToolFailure::Internal(_)) => "protocol-error",
            };
            let mut argument_names: Vec<String> = request
                .arguments
                .iter()
                .flat_map(|args| args.keys().cloned())
                .collect();
            argument_names.sort();
            let record = ToolInvocationRecord {
                id: aic_storage::id_string(&aic_storage::new_id()),
                created_at: iso(self.inner.host.now_ms()),
                tool: name,
                argument_names,
                outcome: outcome.to_owned(),
                duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
                session_id: self.inner.session_id.clone(),
            };
            // Logged off the response path; a failure is only a debug line.
            let host = self.inner.host.clone();
            tokio::task::spawn_blocking(move || log_invocation(&host, &root, &record));
        }
        match result {
            Ok(mut value) => {
                // `aic_compile`: the prompt once, as the text the model reads;
                // its metadata as the structured content.
                let prompt = value
                    .as_object_mut()
                    .and_then(|object| object.remove(handlers::PROMPT_KEY))
                    .and_then(|prompt| prompt.as_str().map(str::to_owned));
                let mut result = CallToolResult::structured(value);
                if let Some(prompt) = prompt {
                    result.content = vec![ContentBlock::text(prompt)];
                }
                Ok(result.into())
            }
            Err(ToolFailure::Tool(message)) => {
                Ok(CallToolResult::error(vec![ContentBlock::text(message)]).into())
            }
            Err(ToolFailure::ToolStructured(value)) => {
                Ok(CallToolResult::structured_error(value).into())
            }
            Err(ToolFailure::Cancelled) => Err(McpError::internal_error(
                "The request was cancelled".to_owned(),
                None,
            )),
            Err(ToolFailure::Internal(message)) => Err(McpError::internal_error(
                format!("Internal error: {}", sanitise(&message)),
                None,
            )),
        }
    }

    async fn on_roots_list_changed(&self, _context: NotificationContext<RoleServer>) {
        if let Ok(mut cached) = self.inner.client_root.lock() {
            *cached = None;
        }
    }
}

/// Writes a `tool_invocation_log` row for a project that exists.
fn log_invocation(host: &Host, root: &Path, record: &ToolInvocationRecord) {
    let Ok(root) = fs_err::canonicalize(root) else {
        return;
    };
    if !root.is_dir() {
        return;
    }
    let outcome = host
        .database()
        .map_err(|error| error.with_hint())
        .and_then(|store| record_tool_invocation(&store, &root, record, host.now_ms()));
    if let Err(message) = outcome {
        tracing::debug!("The tool call was not logged: {message}");
    }
}

/// An internal message safe to send: one line, no home directory, bounded.
fn sanitise(message: &str) -> String {
    let mut line = message.lines().next().unwrap_or_default().to_owned();
    if let Some(home) = std::env::var_os("HOME").and_then(|h| h.into_string().ok())
        && home.len() > 1
    {
        line = line.replace(&home, "~");
    }
    line.chars().take(500).collect()
}

/// Runs the server on stdin/stdout until EOF, SIGINT or SIGTERM.
///
/// # Errors
///
/// When the async runtime cannot start or the transport fails at start-up.
pub fn serve() -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let host = Arc::new(Host::long_lived());
    runtime.block_on(async {
        let session_id = aic_storage::id_string(&aic_storage::new_id());
        let server = AicServer::new(session_id.clone(), host.clone());
        let running = match server.serve(rmcp::transport::stdio()).await {
            Ok(running) => running,
            // The client went away before `initialize`: nothing to serve.
            Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => {
                return anyhow::Ok(());
            }
            Err(error) => return Err(error.into()),
        };
        // Start bookkeeping (self-check, crash back-fill, retention) once the
        // server can answer: it must not delay the first response.
        let lifecycle = {
            let host = host.clone();
            tokio::task::spawn_blocking(move || start_session(&host, &session_id))
        };
        let cancel = running.cancellation_token();
        tokio::spawn(async move {
            shutdown_signal().await;
            cancel.cancel();
        });
        let quit = running.waiting().await;
        if let Ok(Some(session)) = lifecycle.await
            && let Ok(store) = host.database()
            && let Err(error) = session.stop(&store, host.clock())
        {
            tracing::warn!("The server session was not marked stopped: {error}");
        }
        if let Err(error) = quit {
            tracing::debug!("The MCP service ended: {error}");
        }
        anyhow::Ok(())
    })?;
    // Blocking work cancelled at shutdown must not hold the process.
    runtime.shutdown_timeout(Duration::from_millis(500));
    Ok(())
}

fn start_session(host: &Host, session_id: &str) -> Option<ServerSession> {
    let store = host
        .database()
        .map_err(|error| {
            tracing::warn!("Server sessions are not recorded: {}", error.with_hint());
        })
        .ok()?;
    let root = std::env::var_os("CLAUDE_PROJECT_DIR")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::current_dir()
                .ok()
                .map(|cwd| crate::root::discover_root(&cwd).0)
        })
        .unwrap_or_default();
    let retention =
        crate::config::load_config(&root, None).map_or(90, |loaded| loaded.config.retention.days);
    let notes = self_check(&store, &root);
    match ServerSession::start_with_id(&store, session_id, notes, retention, host.clock()) {
        Ok((session, report)) => {
            tracing::debug!(
                "Server session {} started ({} crashes back-filled)",
                session.id(),
                report.crashes_backfilled
            );
            Some(session)
        }
        Err(error) => {
            tracing::warn!("The server session was not recorded: {error}");
            None
        }
    }
}

async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let Ok(mut terminate) = signal(SignalKind::terminate()) else {
            let _ = tokio::signal::ctrl_c().await;
            return;
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = terminate.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_uris_are_decoded() {
        assert_eq!(percent_decode("/home/a%20b/x"), "/home/a b/x");
        assert_eq!(percent_decode("/x%zz"), "/x%zz");
    }

    #[test]
    fn the_filesystem_root_is_refused() {
        assert!(matches!(
            refuse_broad_root(Path::new("/")),
            Err(ToolFailure::Tool(message)) if message.contains("filesystem root")
        ));
        assert!(refuse_broad_root(Path::new("/tmp")).is_ok());
    }

    #[test]
    fn internal_messages_are_one_bounded_line() {
        let long = format!("first line {}\nsecond", "x".repeat(1_000));
        let clean = sanitise(&long);
        assert!(!clean.contains('\n') && clean.chars().count() == 500);
    }
}
