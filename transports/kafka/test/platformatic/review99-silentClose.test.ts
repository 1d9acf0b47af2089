// ../review99-silentClose.test.ts on @platformatic/kafka (see ../clients.ts); './use' must stay the first import.
import './use';
import '../review99-silentClose.test';
