// ../rebalanceState.test.ts on @platformatic/kafka (see ../clients.ts); './use' must stay the first import.
import './use';
import '../rebalanceState.test';
import { useKafkaClient } from '../clients';

useKafkaClient('platformatic');
