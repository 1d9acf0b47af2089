// ../review98-closeWhileConnecting.test.ts on @platformatic/kafka (see ../clients.ts); './use' must stay the first import.
import './use';
import '../review98-closeWhileConnecting.test';
