import './use';
import '../foreignProducer.test';
