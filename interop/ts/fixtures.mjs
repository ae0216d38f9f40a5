// Fixture facts shared by the TypeScript interop suites (everything.mjs, modern.mjs): the
// conformance suite's answers to the server's questions, by elicitation message / sampling
// prompt, and small result helpers.
import assert from 'node:assert/strict';

export const SEP1034_MESSAGE = 'Please review and update the form fields with defaults';
export const SEP1330_MESSAGE = 'Please select options from the enum fields';
export const oneField = (name, type) => ({ type: 'object', properties: { [name]: { type } }, required: [name] });

// The conformance suite's answers, by elicitation message / sampling prompt.
export const ELICIT_ANSWERS = {
  'Please provide your information': { username: 'testuser', email: 'test@example.com' },
  [SEP1034_MESSAGE]: { name: 'Jane Smith', age: 25, score: 88, status: 'inactive', verified: false },
  [SEP1330_MESSAGE]: {
    untitledSingle: 'option1',
    titledSingle: 'value1',
    legacyEnum: 'opt1',
    untitledMulti: ['option1', 'option2'],
    titledMulti: ['value1', 'value2'],
  },
  'What is your name?': { name: 'Alice' },
  'Step 1: What is your name?': { name: 'Alice' },
  'Step 2: What is your favorite color?': { color: 'blue' },
  'Please confirm': { ok: true },
  'What context should the prompt use?': { context: 'test context' },
  'Elicitation input': { value: 'typed' },
  'Streaming elicitation: please provide a value': { value: 'streamed' },
};
export const SAMPLING_ANSWERS = {
  'What is the capital of France?': 'The capital of France is Paris.',
  'Generate a greeting': 'Hello there!',
};
export const DEFAULT_SAMPLING_ANSWER = 'This is a test response from the client';
export const ROOTS = [{ uri: 'file:///test/root', name: 'Test Root' }];
export const TOOL_LOGS = ['Tool execution started', 'Tool processing data', 'Tool execution completed'];

export /** The single text block of a successful result. */
function textOf(result) {
  assert.notEqual(result.isError, true, `unexpected tool error: ${JSON.stringify(result)}`);
  assert.equal(result.content.length, 1, JSON.stringify(result.content));
  assert.equal(result.content[0].type, 'text');
  return result.content[0].text;
}

// The fixture lists and schemas of the `everything` server (contract §2–§4, §10).
export const TOOLS = [
  'test_simple_text', 'test_image_content', 'test_audio_content', 'test_embedded_resource',
  'test_multiple_content_types', 'test_tool_with_logging', 'test_tool_with_progress', 'test_error_handling',
  'test_reconnection', 'test_sampling', 'test_elicitation', 'test_elicitation_sep1034_defaults',
  'test_elicitation_sep1330_enums', 'json_schema_2020_12_tool', 'test_custom_header', 'test_missing_capability',
  'test_streaming_elicitation', 'test_logging_tool', 'test_trigger_tool_change', 'test_trigger_prompt_change',
  'test_input_required_result_elicitation', 'test_input_required_result_sampling',
  'test_input_required_result_list_roots', 'test_input_required_result_request_state',
  'test_input_required_result_multiple_inputs', 'test_input_required_result_multi_round',
  'test_input_required_result_tampered_state', 'test_input_required_result_capabilities',
];
// The tasks extension's fixtures (SEP-2663) everything lists after the others (embedded-http
// serves no tasks), and the extension it declares in the 2026-07-28 era.
export const TASK_TOOLS = [
  'greet', 'slow_compute', 'failing_job', 'protocol_error_job', 'confirm_delete', 'multi_input',
  'test_tool_with_task',
];
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
/** The fixtures in order, then, from everything only, the tasks fixtures. */
export function assertToolNames(names) {
  assert.deepEqual(names.slice(0, TOOLS.length), TOOLS);
  const rest = names.slice(TOOLS.length);
  if (rest.length) assert.deepEqual(rest, TASK_TOOLS);
}
export const PROMPTS = [
  'test_simple_prompt', 'test_prompt_with_arguments', 'test_prompt_with_embedded_resource',
  'test_prompt_with_image', 'test_input_required_result_prompt',
];
export const RESOURCES = [
  ['test://static-text', 'static-text', 'text/plain'],
  ['test://static-binary', 'static-binary', 'image/png'],
  ['test://watched-resource', 'watched-resource', 'text/plain'],
];
// The skills extension (SEP-2640) everything declares, and the SKILL.md of its one skill, which
// its resources/list gives after the fixtures (embedded-http serves no skills).
export const SKILLS_EXTENSION = 'io.modelcontextprotocol/skills';
export const SKILL_RESOURCE = ['skill://everything/greeting/SKILL.md', 'greeting', 'text/markdown'];
export const TEMPLATE = 'test://template/{id}/data';
// §10: the conformance suite's constant, which must come back from tools/list unchanged.
export const JSON_SCHEMA_2020_12 = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  $defs: {
    address: {
      $anchor: 'addressDef',
      type: 'object',
      properties: { street: { type: 'string' }, city: { type: 'string' } },
    },
  },
  properties: {
    name: { type: 'string' },
    address: { $ref: '#/$defs/address' },
    contactMethod: { type: 'string', enum: ['phone', 'email'] },
    phone: { type: 'string' },
    email: { type: 'string' },
  },
  allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
  if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
  then: { required: ['phone'] },
  else: { required: ['email'] },
  additionalProperties: false,
};
export const ELICITATION_SCHEMA = {
  type: 'object',
  properties: {
    username: { type: 'string', description: "User's response" },
    email: { type: 'string', description: "User's email address" },
  },
  required: ['username', 'email'],
};
