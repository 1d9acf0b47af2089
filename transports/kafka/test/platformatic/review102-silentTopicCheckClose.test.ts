// ../review102-silentTopicCheckClose.test.ts on @platformatic/kafka (see ../clients.ts); './use' must stay the first import.
import './use';
import '../review102-silentTopicCheckClose.test';
