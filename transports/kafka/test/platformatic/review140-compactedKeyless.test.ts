// ../review140-compactedKeyless.test.ts on @platformatic/kafka (see ../clients.ts); './use' must stay the first import.
import './use';
import '../review140-compactedKeyless.test';
