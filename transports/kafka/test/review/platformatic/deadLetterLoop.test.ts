// ../deadLetterLoop.test.ts on @platformatic/kafka (see ../../clients.ts); '../../platformatic/use' must stay the first import.
import '../../platformatic/use';
import '../deadLetterLoop.test';
