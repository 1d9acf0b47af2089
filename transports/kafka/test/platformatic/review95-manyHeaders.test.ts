// ../review95-manyHeaders.test.ts on @platformatic/kafka (see ../clients.ts); './use' must stay the first import.
import './use';
import '../review95-manyHeaders.test';
