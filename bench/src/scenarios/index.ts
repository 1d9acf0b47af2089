import type { Scenario } from '../runner';
import { e2eLatency } from './e2eLatency';
import { inboxAcceptRabbitmq } from './inboxAcceptRabbitmq';
import { relayKafka } from './relayKafka';
import { relayRabbitmq } from './relayRabbitmq';
import { relayScaling } from './relayScaling';
import { relaySqs } from './relaySqs';
import { workerCompletions } from './workerCompletions';

export {
  e2eLatency,
  inboxAcceptRabbitmq,
  relayKafka,
  relayRabbitmq,
  relayScaling,
  relaySqs,
  workerCompletions,
};

/** Every scenario, in the order `npm run bench` runs them. */
export function allScenarios(): Scenario[] {
  return [
    relayKafka,
    relayRabbitmq,
    relaySqs,
    inboxAcceptRabbitmq,
    workerCompletions,
    e2eLatency,
    relayScaling(2),
    relayScaling(4),
  ];
}
