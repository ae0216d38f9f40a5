// Helpers shared by the TypeScript interop suites.

/** Resolves after `ms` milliseconds. */
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Polls `cond` until it holds or `ms` pass; returns whether it held. */
export async function waitFor(cond, ms = 5000, step = 10) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (cond()) return true;
    await sleep(step);
  }
  return cond();
}
