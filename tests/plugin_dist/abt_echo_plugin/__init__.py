"""An abt plugin: the ``echo`` provider type, the ``memo`` trace format and the ``echo``
simulate target type."""
