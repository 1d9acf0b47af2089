// ../review71-outageKind.test.ts on @platformatic/kafka (see ../clients.ts); './use' must stay the first import.
import './use';
import '../review71-outageKind.test';
import { useKafkaClient } from '../clients';

useKafkaClient('platformatic');
