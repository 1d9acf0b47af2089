/**
 * What ferry does with the answer of an application function that must answer synchronously
 * (identity, tenant, random, a dead-letter topic) when that answer is not used: a Promise (an
 * `async` function, by mistake) that rejects later would be an unhandled rejection, which ends
 * the process under Node's default (--unhandled-rejections=throw). Its rejection is handled
 * here, and a value that cannot even be inspected (a Proxy) is left alone. Never throws.
 */
export function discardAnswer(value: unknown): void {
  try {
    if (value instanceof Promise) value.then(undefined, () => undefined);
  } catch {
    // A value whose prototype or `then` cannot be read: nothing ferry could attach to.
  }
}
