import { useKafkaClient } from '../clients';

useKafkaClient('platformatic');
