
è
 

service.name
telemetrygenÃ

	tracewire0.1.0¬
ƒ©ïÑ\˜©wàqÉ>â‹á'¯™ã³àt"•A¹,ğS*okey-dokey-009€•ñlW¯AøuñlW¯J
net.peer.ip	
1.2.3.4J%
peer.service
telemetrygen-clientJ!
otel.scope.name
telemetrygen