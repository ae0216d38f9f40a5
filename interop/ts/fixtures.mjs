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
