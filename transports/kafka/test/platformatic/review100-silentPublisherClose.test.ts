// ../review100-silentPublisherClose.test.ts on @platformatic/kafka (see ../clients.ts); './use' must stay the first import.
import './use';
import '../review100-silentPublisherClose.test';
