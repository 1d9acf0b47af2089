// ../review71-lagSeries.test.ts on @platformatic/kafka (see ../clients.ts); './use' must stay the first import.
import './use';
import '../review71-lagSeries.test';
import { useKafkaClient } from '../clients';

useKafkaClient('platformatic');
