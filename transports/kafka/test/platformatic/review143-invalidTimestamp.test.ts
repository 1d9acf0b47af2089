// ../review143-invalidTimestamp.test.ts on @platformatic/kafka (see ../clients.ts); './use' must stay the first import.
import './use';
import '../review143-invalidTimestamp.test';
