//! Feature `tasks`: the tasks extension (SEP-2663) on the device, to measure what it costs
//! in flash and RAM (`scripts/firmware.sh size` with `MCP_FIRMWARE_FEATURES=tasks`). Every
//! tool may run as a task: a client that negotiated the extension gets a `CreateTaskResult`
//! (the synchronous tools complete at once) and fetches the result with `tasks/get`.

use mcp_rs_core::model::tasks::{TaskStore, TaskSupport, TaskTable};
use mcp_rs_core::{CallRequest, Dispatch, SecretKey, ServerHandler, Tool, ToolResult, ToolSet};

use crate::tools::DeviceTools;

/// Two tasks of 512 bytes each.
pub type Table = TaskTable<2, 512>;

/// The device's tools, each of them task-capable, and the table.
pub struct WithTasks {
    tools: TaskTools,
    table: Table,
}

struct TaskTools(DeviceTools);

impl WithTasks {
    /// `key` derives the task ids.
    pub const fn new(key: SecretKey) -> Self {
        WithTasks {
            tools: TaskTools(DeviceTools::new()),
            table: Table::new(key),
        }
    }
}

impl ToolSet for TaskTools {
    fn len(&self) -> usize {
        self.0.len()
    }
    fn get(&self, index: usize) -> Option<Tool<'_>> {
        self.0.get(index)
    }
    fn find(&self, name: mcp_rs_core::wire::json::JsonStr<'_>) -> Option<usize> {
        self.0.find(name)
    }
    fn call(&mut self, request: &CallRequest<'_>, result: &mut ToolResult<'_, '_>) -> Dispatch {
        self.0.call(request, result)
    }
    fn task_support(&self, _: usize) -> TaskSupport {
        TaskSupport::Optional
    }
}

impl ServerHandler for WithTasks {
    fn tools(&mut self) -> Option<&mut dyn ToolSet> {
        Some(&mut self.tools)
    }
    fn tasks(&mut self) -> Option<&mut dyn TaskStore> {
        Some(&mut self.table)
    }
}
