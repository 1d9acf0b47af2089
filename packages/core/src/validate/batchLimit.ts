/**
 * The most items one batch call of ferry's API takes: the inputs of acceptMany / acceptDetailed
 * (INBOX_INPUT_LIMITS.maxBatchInputs), the events of emitMany, and the
 * outcomes the relay reads of a publisher's answer. One concept, one number: a
 * longer array (a sparse one, a Proxy claiming a length in the billions) is refused before any
 * item is read (arrayLengthArgument), since read item by item it exhausted the memory. 10,000 is
 * also the most rows a relay claims in one batch (`batchSize`).
 */
export const MAX_BATCH_ITEMS = 10_000;
