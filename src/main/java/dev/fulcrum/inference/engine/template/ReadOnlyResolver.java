package dev.fulcrum.inference.engine.template;

import java.beans.FeatureDescriptor;
import java.util.Iterator;

import jinjava.javax.el.ELContext;
import jinjava.javax.el.ELResolver;

/** An ELResolver that only reads: the methods it does not use say so. */
abstract class ReadOnlyResolver extends ELResolver {

    @Override
    public Class<?> getType(ELContext context, Object base, Object property) {
        return null;
    }

    @Override
    public void setValue(ELContext context, Object base, Object property, Object value) {
    }

    @Override
    public boolean isReadOnly(ELContext context, Object base, Object property) {
        return true;
    }

    @Override
    public Iterator<FeatureDescriptor> getFeatureDescriptors(ELContext context, Object base) {
        return null;
    }

    @Override
    public Class<?> getCommonPropertyType(ELContext context, Object base) {
        return null;
    }
}
