// ../review110-openTransactionLag.test.ts on @platformatic/kafka (see ../clients.ts); './use' must stay the first import.
import './use';
import '../review110-openTransactionLag.test';
