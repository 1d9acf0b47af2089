export { startLease, type Lease, type LeaseLoss, type LeaseLossReason, type LeaseOptions } from './heartbeat';
export { checkLeaseTiming, leaseHeartbeatInterval } from './timing';
