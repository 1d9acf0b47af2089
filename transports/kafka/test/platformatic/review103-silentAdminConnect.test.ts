// ../review103-silentAdminConnect.test.ts on @platformatic/kafka (see ../clients.ts); './use' must stay the first import.
import './use';
import '../review103-silentAdminConnect.test';
