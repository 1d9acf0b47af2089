// ../review132-closeAfterFailedLeave.test.ts on @platformatic/kafka (see ../clients.ts); './use' must stay the first import.
import './use';
import '../review132-closeAfterFailedLeave.test';
