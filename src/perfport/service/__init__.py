"""Layer 6: the work-group-size prediction service: ``WgService`` (plain Python) and its HTTP
daemon (``perfport.service.app``, an optional extra: pip install 'perfport[serve]')."""

from perfport.service.service import Answer, RefusalStored, Scenario, WgService

__all__ = ["Answer", "RefusalStored", "Scenario", "WgService"]
