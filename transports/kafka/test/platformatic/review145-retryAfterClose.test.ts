// ../review145-retryAfterClose.test.ts on @platformatic/kafka (see ../clients.ts); './use' must stay the first import.
import './use';
import '../review145-retryAfterClose.test';
