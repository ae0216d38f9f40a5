//! Shortcuts: one `request_*` method per request kind, with default [`Options`] (the
//! config's timeout, no progress). Everything else goes through [`Client::send`].

use super::error::ClientError;
use super::requests::{Options, Reference, Request};
use super::{Client, Sent};
use crate::model::logging::LogLevel;

impl Client<'_> {
    /// `tools/list` from `cursor` with default options.
    pub fn request_tools_list(
        &mut self,
        cursor: Option<&str>,
        now_ms: u64,
        out: &mut [u8],
    ) -> Result<Sent, ClientError> {
        self.send(
            &Request::ListTools { cursor },
            Options::default(),
            now_ms,
            out,
        )
    }

    /// `tools/call` of `name` with raw JSON `arguments`, with default options.
    pub fn request_tools_call(
        &mut self,
        name: &str,
        arguments: Option<&str>,
        now_ms: u64,
        out: &mut [u8],
    ) -> Result<Sent, ClientError> {
        let request = Request::CallTool { name, arguments };
        self.send(&request, Options::default(), now_ms, out)
    }

    /// `prompts/list` from `cursor` with default options.
    pub fn request_prompts_list(
        &mut self,
        cursor: Option<&str>,
        now_ms: u64,
        out: &mut [u8],
    ) -> Result<Sent, ClientError> {
        self.send(
            &Request::ListPrompts { cursor },
            Options::default(),
            now_ms,
            out,
        )
    }

    /// `prompts/get` of `name` with raw JSON `arguments`, with default options.
    pub fn request_prompts_get(
        &mut self,
        name: &str,
        arguments: Option<&str>,
        now_ms: u64,
        out: &mut [u8],
    ) -> Result<Sent, ClientError> {
        let request = Request::GetPrompt { name, arguments };
        self.send(&request, Options::default(), now_ms, out)
    }

    /// `resources/list` from `cursor` with default options.
    pub fn request_resources_list(
        &mut self,
        cursor: Option<&str>,
        now_ms: u64,
        out: &mut [u8],
    ) -> Result<Sent, ClientError> {
        let request = Request::ListResources { cursor };
        self.send(&request, Options::default(), now_ms, out)
    }

    /// `resources/templates/list` from `cursor` with default options.
    pub fn request_resource_templates_list(
        &mut self,
        cursor: Option<&str>,
        now_ms: u64,
        out: &mut [u8],
    ) -> Result<Sent, ClientError> {
        let request = Request::ListResourceTemplates { cursor };
        self.send(&request, Options::default(), now_ms, out)
    }

    /// `resources/read` of `uri` with default options.
    pub fn request_resources_read(
        &mut self,
        uri: &str,
        now_ms: u64,
        out: &mut [u8],
    ) -> Result<Sent, ClientError> {
        self.send(
            &Request::ReadResource { uri },
            Options::default(),
            now_ms,
            out,
        )
    }

    /// `completion/complete` of `argument` (typed so far: `value`) with default options.
    pub fn request_complete(
        &mut self,
        reference: Reference<'_>,
        argument: &str,
        value: &str,
        now_ms: u64,
        out: &mut [u8],
    ) -> Result<Sent, ClientError> {
        let request = Request::Complete {
            reference,
            argument,
            value,
            context: None,
        };
        self.send(&request, Options::default(), now_ms, out)
    }

    /// `ping` (legacy era) with default options.
    pub fn request_ping(&mut self, now_ms: u64, out: &mut [u8]) -> Result<Sent, ClientError> {
        self.send(&Request::Ping, Options::default(), now_ms, out)
    }

    /// `logging/setLevel` (legacy era) with default options.
    pub fn request_set_level(
        &mut self,
        level: LogLevel,
        now_ms: u64,
        out: &mut [u8],
    ) -> Result<Sent, ClientError> {
        self.send(&Request::SetLevel(level), Options::default(), now_ms, out)
    }
}
