// ../review126-closeInConnected.test.ts on @platformatic/kafka (see ../clients.ts); './use' must stay the first import.
import './use';
import '../review126-closeInConnected.test';
