/** The topic config whose value says whether a topic is compacted. */
export const CLEANUP_POLICY = 'cleanup.policy';
/** The DescribeConfigs resource type of a topic (the same number in both clients' enumerations). */
export const TOPIC_RESOURCE = 2;
