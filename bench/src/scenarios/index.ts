import type { Scenario } from '../runner';
import { blockedBacklog } from './blockedBacklog';
import { e2eLatencyBrokers } from './e2eBrokers';
import { e2eLatency } from './e2eLatency';
import { inboxAcceptRabbitmq } from './inboxAcceptRabbitmq';
import { relayKafka, relayKafkaPlatformatic } from './relayKafka';
import { relayKafkaCeiling } from './relayKafkaCeiling';
import { relayKafkaLockShape } from './relayKafkaLockShape';
import { relayProcesses } from './relayProcesses';
import { relayRabbitmq } from './relayRabbitmq';
import { relayRabbitmqPeer } from './relayRabbitmqPeer';
import { relayScaling } from './relayScaling';
import { relaySqs } from './relaySqs';
import { workerCommitShape } from './workerCommitShape';
import { workerCompletions, workerCompletionsPg } from './workerCompletions';

export {
  blockedBacklog,
  e2eLatency,
  e2eLatencyBrokers,
  inboxAcceptRabbitmq,
  relayKafka,
  relayKafkaCeiling,
  relayKafkaLockShape,
  relayKafkaPlatformatic,
  relayProcesses,
  relayRabbitmq,
  relayRabbitmqPeer,
  relayScaling,
  relaySqs,
  workerCommitShape,
  workerCompletions,
  workerCompletionsPg,
};

/** Every scenario, in the order `npm run bench` runs them. */
export function allScenarios(): Scenario[] {
  return [
    relayKafka,
    relayKafkaPlatformatic,
    relayKafkaCeiling,
    relayKafkaLockShape,
    relayRabbitmq,
    relayRabbitmqPeer,
    relaySqs,
    inboxAcceptRabbitmq,
    workerCompletions,
    workerCompletionsPg,
    workerCommitShape,
    e2eLatency,
    e2eLatencyBrokers,
    relayScaling(2),
    relayScaling(4),
    relayProcesses(2),
    relayProcesses(4),
    relayProcesses(8),
    blockedBacklog,
  ];
}
