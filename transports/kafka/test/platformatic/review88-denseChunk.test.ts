// ../review88-denseChunk.test.ts on @platformatic/kafka (see ../clients.ts); './use' must stay the first import.
import './use';
import '../review88-denseChunk.test';
