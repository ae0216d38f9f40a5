//! [`ServerHandler`]: what one server offers, one optional provider per capability.
//!
//! Capabilities in `initialize` and `server/discover` are derived from the providers a
//! handler returns: a server with no [`PromptSet`] declares no `prompts`, and `prompts/*`
//! requests are answered -32601.

#[cfg(feature = "completion")]
use crate::model::completion::Completions;
#[cfg(feature = "prompts")]
use crate::model::prompts::PromptSet;
#[cfg(feature = "resources")]
use crate::model::resources::ResourceSet;
#[cfg(feature = "skills")]
use crate::model::skills::SkillSet;
#[cfg(feature = "tasks")]
use crate::model::tasks::TaskStore;
use crate::model::tools::ToolSet;

/// What a server offers: one optional provider per capability. Every method defaults to
/// `None` (capability absent). A plain [`ToolSet`] is served by
/// [`Session::handle_message`](crate::Session::handle_message) without implementing this.
///
/// ```
/// use mcp_rs_core::{ServerHandler, Tool, ToolSet};
/// static TOOLS: [Tool<'static>; 1] = [Tool::new("echo", r#"{"type":"object"}"#)];
/// struct Echo;
/// impl ToolSet for Echo {
///     fn len(&self) -> usize { TOOLS.len() }
///     fn get(&self, i: usize) -> Option<Tool<'_>> { TOOLS.get(i).copied() }
/// }
/// struct Demo { tools: Echo }
/// impl ServerHandler for Demo {
///     fn tools(&mut self) -> Option<&mut dyn ToolSet> { Some(&mut self.tools) }
/// }
/// ```
pub trait ServerHandler {
    /// The tools, if the server has the `tools` capability.
    fn tools(&mut self) -> Option<&mut dyn ToolSet> {
        None
    }
    /// The resources, if the server has the `resources` capability.
    #[cfg(feature = "resources")]
    fn resources(&mut self) -> Option<&mut dyn ResourceSet> {
        None
    }
    /// The prompts, if the server has the `prompts` capability.
    #[cfg(feature = "prompts")]
    fn prompts(&mut self) -> Option<&mut dyn PromptSet> {
        None
    }
    /// Argument completion, if the server has the `completions` capability.
    #[cfg(feature = "completion")]
    fn completions(&mut self) -> Option<&mut dyn Completions> {
        None
    }
    /// The skills (`io.modelcontextprotocol/skills` extension), served only together with
    /// [`resources`](Self::resources), which serves the skills' files.
    #[cfg(feature = "skills")]
    fn skills(&mut self) -> Option<&dyn SkillSet> {
        None
    }
    /// The task table (`io.modelcontextprotocol/tasks` extension): with it, the extension
    /// is declared, `tasks/*` are served and the tools whose
    /// [`ToolSet::task_support`] allows it run as tasks for clients that negotiated it.
    #[cfg(feature = "tasks")]
    fn tasks(&mut self) -> Option<&mut dyn TaskStore> {
        None
    }
}

/// Serves a bare [`ToolSet`] as a [`ServerHandler`] with tools only (what
/// [`Session::handle_message`](crate::Session::handle_message) wraps its argument in).
#[derive(Debug)]
pub struct ToolsOnly<'t, T: ?Sized>(pub &'t mut T);

impl<T: ToolSet + ?Sized> ToolSet for ToolsOnly<'_, T> {
    fn len(&self) -> usize {
        self.0.len()
    }
    fn get(&self, index: usize) -> Option<crate::Tool<'_>> {
        self.0.get(index)
    }
    fn find(&self, name: crate::wire::json::JsonStr<'_>) -> Option<usize> {
        self.0.find(name)
    }
    fn call(
        &mut self,
        request: &crate::CallRequest<'_>,
        result: &mut crate::ToolResult<'_, '_>,
    ) -> crate::Dispatch {
        self.0.call(request, result)
    }
    #[cfg(feature = "tasks")]
    fn task_support(&self, index: usize) -> crate::model::tasks::TaskSupport {
        self.0.task_support(index)
    }
}

impl<T: ToolSet + ?Sized> ServerHandler for ToolsOnly<'_, T> {
    fn tools(&mut self) -> Option<&mut dyn ToolSet> {
        Some(self)
    }
}
