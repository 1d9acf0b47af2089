// ../review129-closeDuringRestart.test.ts on @platformatic/kafka (see ../clients.ts); './use' must stay the first import.
import './use';
import '../review129-closeDuringRestart.test';
import { useKafkaClient } from '../clients';

useKafkaClient('platformatic');
