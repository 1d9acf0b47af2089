/**
 * Review finding (failed first), review 97. A wait of a publish on its own budget (confirmTimeoutMs)
 * that the publish call's one deadline (answerWithinMs) cut short reported the budget it did not
 * reach: "not confirmed within 5000 ms", "the Kafka producer that replaces one whose send failed
 * did not connect within 5000 ms" after well under a second. The text named the wrong deadline
 * (and the wrong option to raise).
 * What should happen: a wait names what ended it: its own budget, or the publish's deadline.
 */
import { deadlineIn, deadlineWithin, raceAbort } from '../src/race';

const never = new Promise<void>(() => undefined);

test('a wait the publish deadline cut short names the publish deadline (answerWithinMs), not its own budget', async () => {
  const whole = deadlineIn(30);
  await expect(
    raceAbort(never, [], 'replacing the Kafka producer', deadlineWithin(5_000, whole)),
  ).rejects.toThrow(
    "replacing the Kafka producer not confirmed within the publish's deadline (answerWithinMs, 30 ms)",
  );
});

test('a wait that ran its own budget names that budget', async () => {
  const whole = deadlineIn(60_000);
  await expect(raceAbort(never, [], 'send', deadlineWithin(30, whole))).rejects.toThrow(
    'send not confirmed within 30 ms',
  );
});
