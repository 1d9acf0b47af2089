// ../outageReport.test.ts on @platformatic/kafka (see ../clients.ts); './use' must stay the first import.
import './use';
import '../outageReport.test';
import { useKafkaClient } from '../clients';

useKafkaClient('platformatic');
