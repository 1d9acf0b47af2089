// ../afterClose.test.ts on @platformatic/kafka (see ../clients.ts); './use' must stay the first import.
import './use';
import '../afterClose.test';
